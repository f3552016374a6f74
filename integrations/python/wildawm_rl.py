"""A client for the wildawm rollout service (`wildawm rl serve`), standard library only.

A trainer asks the service for each train step's batch and trains on its
segment samples (docs/segment.md). This module posts the request, long-polls
until the batch is done, checks the batch's invariants and groups its samples
as groups of trajectories of segments:

    client = Client("http://127.0.0.1:8020")
    batch = client.request_batch(step=1, tasks=8, g=4,
                                 engine="sglang+http://10.0.0.2:30000/v1#qwen3-8b")
    validate_batch(batch)
    for group in group_samples(batch):          # one per ready task
        for trajectory in group:                # exactly G
            for segment in trajectory:          # segment_index 0..count-1
                ...

As a command (the summary is one line of JSON on stdout):

    python3 wildawm_rl.py --url http://127.0.0.1:8020 --step 1 --tasks 2 --g 4 \\
        --policy scripted:replay-ensemble

exits 0 on a valid batch, 1 on an invalid one (the problems on stderr) and 2
when the service refused the request or the batch failed.

A service started with `--token-file FILE` (required when it listens beyond
loopback) wants "Authorization: Bearer TOKEN" on every request but /health,
TOKEN the file's line. Give it as Client(url, token=...) or
Client(url, token_file=FILE), or set $WILDAWM_TOKEN or $WILDAWM_TOKEN_FILE;
the command takes --token-file. A missing or wrong token is a RequestError
with status 401.
"""

import argparse
import json
import math
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

SCHEMA_VERSION = 1
"""The batch and sample format version this module reads (trainer.SchemaVersion)."""

DEFAULT_G = 4
"""The service's G when a request leaves it out."""

MAX_WAIT = 300
"""The longest long poll the service holds (GET /v1/batches/{id}?wait=)."""


class WildawmError(Exception):
    """Any failure of a call to the rollout service."""


class RequestError(WildawmError):
    """The service refused a request (HTTP 4xx or 5xx); message is its "error"."""

    def __init__(self, method, url, status, message):
        self.method = method
        self.url = url
        self.status = status
        self.message = message
        super().__init__(f"{method} {url}: HTTP {status}: {message}")


class BatchFailed(WildawmError):
    """The service computed the batch and it failed; message is the batch's "error"."""

    def __init__(self, batch_id, message, batch):
        self.batch_id = batch_id
        self.message = message
        self.batch = batch
        super().__init__(f"batch {batch_id} failed: {message}")


class InvalidBatch(WildawmError):
    """A batch broke the format's invariants; problems lists each one."""

    def __init__(self, problems):
        self.problems = list(problems)
        shown = "; ".join(self.problems[:10])
        more = f" (and {len(self.problems) - 10} more)" if len(self.problems) > 10 else ""
        super().__init__(f"invalid batch: {len(self.problems)} problem(s): {shown}{more}")


def read_token(path):
    """The bearer token in the file `wildawm rl serve --token-file` reads or writes: its one line."""
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        raise WildawmError(f"token file {path}: {e.strerror or e} (give the file the service's --token-file names)") from None
    if not token or any(c.isspace() for c in token):
        raise WildawmError(f"token file {path}: not a token: the file holds one line, the token")
    return token


def resolve_token(token=None, token_file=None):
    """The token a client sends: token, else token_file's, else $WILDAWM_TOKEN, else $WILDAWM_TOKEN_FILE's, else None."""
    if token:
        return token
    if token_file:
        return read_token(token_file)
    if os.environ.get("WILDAWM_TOKEN"):
        return os.environ["WILDAWM_TOKEN"].strip()
    if os.environ.get("WILDAWM_TOKEN_FILE"):
        return read_token(os.environ["WILDAWM_TOKEN_FILE"])
    return None


class Client:
    """The rollout service at base_url; timeout bounds each HTTP exchange beyond the long poll.

    token (or token_file, or $WILDAWM_TOKEN, or $WILDAWM_TOKEN_FILE) is the bearer
    token of a service started with --token-file."""

    def __init__(self, base_url, timeout=30.0, token=None, token_file=None):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url {base_url!r}: give the service's http:// address, e.g. http://127.0.0.1:8020")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.token = resolve_token(token, token_file)

    def _call(self, method, path, body=None, wait=0):
        """One exchange: (status, decoded JSON body). 4xx/5xx raise RequestError."""
        url = self.base_url + path
        data = None
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout + wait) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            message = _error_message(raw, e.reason)
            if e.code == 401:
                given = "the token given was refused" if self.token else "no token was given"
                message += f" ({given}: pass token= or token_file=, or set $WILDAWM_TOKEN or $WILDAWM_TOKEN_FILE)"
            raise RequestError(method, url, e.code, message) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise WildawmError(f"{method} {url}: {reason} (is `wildawm rl serve` running there?)") from e
        try:
            return status, json.loads(raw)
        except ValueError:
            raise WildawmError(f"{method} {url}: HTTP {status} with a body that is not JSON: {raw[:200]!r}") from None

    def health(self):
        """GET /health: the service's status object."""
        _, body = self._call("GET", "/health")
        return body

    def submit(self, request):
        """POST /v1/batches: (status, body): 202 with {"id", "status"} or 200 with the whole batch."""
        return self._call("POST", "/v1/batches", body=request)

    def poll(self, batch_id, wait=30):
        """GET /v1/batches/{id}?wait=: (status, body): 200 with the batch, 202 while it runs."""
        wait = max(0, min(int(wait), MAX_WAIT))
        path = "/v1/batches/" + urllib.parse.quote(batch_id, safe="") + f"?wait={wait}"
        return self._call("GET", path, wait=wait)

    def request_batch(
        self,
        step,
        tasks,
        g,
        engine=None,
        sampling=None,
        policy_version=None,
        policy=None,
        policy_params=None,
        seed=None,
        harness=None,
        wait=MAX_WAIT,
        deadline=None,
    ):
        """Ask for train step `step`'s batch and wait until it is done.

        Give the trainer's inference engine as engine ("sglang+http://HOST:PORT/v1#MODEL")
        or an offline policy ("scripted:replay-ensemble") with its policy_params.
        Returns the batch (status "done"). Raises RequestError when the service refuses
        the request (400 names the field; 409 means the step was asked for with another
        request), BatchFailed when the batch failed, and WildawmError when deadline
        seconds (None: no limit) pass first.
        """
        request = build_request(step, tasks, g, engine, sampling, policy_version, policy, policy_params, seed, harness)
        start = time.monotonic()
        status, body = self.submit(request)
        while True:
            if status == 200:
                return _finished(body)
            if status != 202 or not isinstance(body, dict) or not body.get("id"):
                raise WildawmError(f"unexpected answer HTTP {status}: {str(body)[:200]}")
            batch_id = body["id"]
            w = wait
            if deadline is not None:
                left = deadline - (time.monotonic() - start)
                if left <= 0:
                    raise WildawmError(f"batch {batch_id} still running after {deadline}s")
                w = min(w, max(1, int(left)))
            status, body = self.poll(batch_id, wait=w)


def build_request(step, tasks, g, engine=None, sampling=None, policy_version=None, policy=None,
                  policy_params=None, seed=None, harness=None):
    """The POST /v1/batches body (trainer.Request); fields left None are left out."""
    request = {"step": int(step), "tasks": int(tasks)}
    if g is not None:
        request["g"] = int(g)
    optional = {
        "engine": engine,
        "harness": harness,
        "sampling": sampling,
        "policy_version": policy_version,
        "policy": policy,
        "policy_params": policy_params,
        "seed": seed,
    }
    for key, value in optional.items():
        if value is not None and value != {}:
            request[key] = value
    return request


def _error_message(raw, fallback):
    try:
        body = json.loads(raw)
    except ValueError:
        text = raw.decode("utf-8", "replace").strip()
        return text or str(fallback)
    if isinstance(body, dict) and body.get("error"):
        return str(body["error"])
    return str(body)


def _finished(batch):
    if not isinstance(batch, dict):
        raise WildawmError(f"batch is not a JSON object: {str(batch)[:200]}")
    if batch.get("status") == "failed":
        raise BatchFailed(batch.get("id"), batch.get("error") or "(no error given)", batch)
    if batch.get("status") != "done":
        raise WildawmError(f"batch {batch.get('id')} answered 200 with status {batch.get('status')!r}, want \"done\"")
    return batch


def batch_g(batch):
    """The G the batch was computed with: its request's, else the default 4."""
    return int((batch.get("request") or {}).get("g") or DEFAULT_G)


def batch_problems(batch):
    """Every invariant of docs/segment.md the batch breaks, as messages (empty when valid)."""
    problems = []
    bad = problems.append
    if not isinstance(batch, dict):
        return [f"batch is a {type(batch).__name__}, not an object"]
    if batch.get("version") != SCHEMA_VERSION:
        bad(f"batch version {batch.get('version')!r}, this client reads version {SCHEMA_VERSION}")
    if batch.get("status") != "done":
        bad(f"batch status {batch.get('status')!r}, want \"done\"")
    g = batch_g(batch)
    groups = batch.get("groups") or []
    samples = batch.get("samples") or []
    ready = {grp.get("index"): grp for grp in groups if grp.get("state") == "ready"}
    n_ready = len(ready)

    trajectories = {}  # rollout_id -> list of samples
    for i, s in enumerate(samples):
        where = f"sample {i} ({s.get('rollout_id')!r} segment {s.get('segment_index')})"
        if s.get("version") != SCHEMA_VERSION:
            bad(f"{where}: version {s.get('version')!r}, want {SCHEMA_VERSION}")
        resp = s.get("response_token_ids") or []
        mask = s.get("loss_mask") or []
        lps = s.get("rollout_logprobs") or []
        if not (len(resp) == len(mask) == len(lps)):
            bad(f"{where}: response_token_ids, loss_mask and rollout_logprobs have lengths "
                f"{len(resp)}, {len(mask)}, {len(lps)}; they must be equal")
        if any(type(m) is not int or m not in (0, 1) for m in mask):
            bad(f"{where}: loss_mask holds values other than 0 and 1")
        if any(m == 0 and lp != 0 for m, lp in zip(mask, lps)):
            bad(f"{where}: rollout_logprobs is not 0 where loss_mask is 0")
        idx, count = s.get("segment_index"), s.get("segment_count")
        if not isinstance(idx, int) or not isinstance(count, int) or not 0 <= idx < count:
            bad(f"{where}: segment_index {idx!r} is not in [0, segment_count {count!r})")
        if s.get("group_index") not in ready:
            bad(f"{where}: group_index {s.get('group_index')!r} is not a ready group of the batch")
        rid = s.get("rollout_id")
        if not rid:
            bad(f"{where}: empty rollout_id")
            continue
        trajectories.setdefault(rid, []).append(s)

    per_group = {}
    for rid, segs in trajectories.items():
        first = segs[0]
        per_group.setdefault(first.get("group_index"), []).append(rid)
        for key in ("group_index", "task_id", "trajectory_index", "segment_count"):
            if len({json.dumps(s.get(key)) for s in segs}) > 1:
                bad(f"rollout {rid}: its segments disagree on {key}")
        indices = sorted(s.get("segment_index") for s in segs if isinstance(s.get("segment_index"), int))
        count = first.get("segment_count")
        if indices != list(range(count if isinstance(count, int) else -1)):
            bad(f"rollout {rid}: segment indices {indices}, want each of 0..{count}-1 once")
        if len({s.get("advantage") for s in segs}) > 1:
            bad(f"rollout {rid}: segments carry different advantages {sorted({s.get('advantage') for s in segs})}")
        trainable = sum(sum(s.get("loss_mask") or []) for s in segs)
        stated = {s.get("trajectory_trainable_tokens") for s in segs}
        if stated != {trainable}:
            bad(f"rollout {rid}: trajectory_trainable_tokens {sorted(stated, key=str)}, "
                f"but its segments' loss masks sum to {trainable}")
        want = 1 / (trainable * g * n_ready) if trainable > 0 and n_ready > 0 else 0.0
        for s in segs:
            w = s.get("loss_weight")
            if not isinstance(w, (int, float)) or not math.isclose(w, want, rel_tol=1e-9, abs_tol=1e-15):
                bad(f"rollout {rid} segment {s.get('segment_index')}: loss_weight {w!r}, "
                    f"want 1/(L_j*G*ready groups) = 1/({trainable}*{g}*{n_ready}) = {want!r}")
                break

    for index, grp in sorted(ready.items(), key=lambda kv: kv[0]):
        rids = per_group.get(index, [])
        if len(rids) != g:
            bad(f"ready group {index} ({grp.get('task_id')}): {len(rids)} trajectories in the samples, want G = {g}")
        tis = sorted(trajectories[r][0].get("trajectory_index") for r in rids)
        if len(rids) == g and tis != list(range(g)):
            bad(f"ready group {index}: trajectory indices {tis}, want 0..{g - 1}")
        for r in rids:
            if trajectories[r][0].get("task_id") != grp.get("task_id"):
                bad(f"rollout {r}: task_id {trajectories[r][0].get('task_id')!r}, its group's is {grp.get('task_id')!r}")
    return problems


def validate_batch(batch):
    """Raise InvalidBatch naming every broken invariant; return the batch when valid."""
    problems = batch_problems(batch)
    if problems:
        raise InvalidBatch(problems)
    return batch


def group_samples(batch):
    """The samples as groups of trajectories of segments.

    One list per ready group in group-index order, each holding its
    trajectories in trajectory-index order, each the list of its segments in
    segment-index order.
    """
    groups = {}
    for s in batch.get("samples") or []:
        groups.setdefault(s["group_index"], {}).setdefault(s["rollout_id"], []).append(s)
    out = []
    for gi in sorted(groups):
        trajs = sorted(groups[gi].values(), key=lambda segs: segs[0].get("trajectory_index", 0))
        out.append([sorted(segs, key=lambda s: s["segment_index"]) for segs in trajs])
    return out


def summary(batch):
    """The one-line summary the command prints."""
    grouped = group_samples(batch)
    stats = batch.get("stats") or {}
    return {
        "id": batch.get("id"),
        "step": batch.get("step"),
        "groups": len(batch.get("groups") or []),
        "ready": sum(1 for grp in batch.get("groups") or [] if grp.get("state") == "ready"),
        "samples": len(batch.get("samples") or []),
        "trajectories": sum(len(group) for group in grouped),
        "tokens": bool(batch.get("tokens")),
        "rewards": [[traj[0].get("reward") for traj in group] for group in grouped],
        "rollouts": stats.get("rollouts"),
    }


def main(argv=None, stdout=None, stderr=None):
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    p = argparse.ArgumentParser(description="Ask the wildawm rollout service for one step's batch and check it.")
    p.add_argument("--url", required=True, help="the service, e.g. http://127.0.0.1:8020")
    p.add_argument("--step", type=int, required=True, help="the train step, from 1")
    p.add_argument("--tasks", type=int, required=True, help="tasks the step samples")
    p.add_argument("--g", type=int, default=DEFAULT_G, help="rollouts per ready task (default 4)")
    p.add_argument("--engine", help="the inference engine, sglang+http://HOST:PORT/v1#MODEL")
    p.add_argument("--policy", help="an offline policy instead of an engine, e.g. scripted:replay-ensemble")
    p.add_argument("--policy-params", help="the offline policy's parameters, as JSON")
    p.add_argument("--policy-version", help="the version of the weights the engine serves")
    p.add_argument("--seed", type=int, help="the step's seed (default 1)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds for each HTTP exchange beyond the long poll")
    p.add_argument("--token-file", help="the service's --token-file: send its token as the bearer token "
                                        "(default $WILDAWM_TOKEN, else $WILDAWM_TOKEN_FILE)")
    p.add_argument("--deadline", type=float, help="give up after this many seconds (default: wait)")
    args = p.parse_args(argv)
    if not args.engine and not args.policy:
        p.error("give --engine or --policy")
    params = None
    if args.policy_params:
        try:
            params = json.loads(args.policy_params)
        except ValueError as e:
            p.error(f"--policy-params is not JSON: {e}")
    try:
        client = Client(args.url, timeout=args.timeout, token_file=args.token_file)
        batch = client.request_batch(
            args.step, args.tasks, args.g, engine=args.engine, policy_version=args.policy_version,
            policy=args.policy, policy_params=params, seed=args.seed, deadline=args.deadline)
    except (WildawmError, ValueError) as e:
        print(f"wildawm_rl: {e}", file=stderr)
        return 2
    problems = batch_problems(batch)
    if problems:
        for problem in problems:
            print(f"wildawm_rl: invalid batch: {problem}", file=stderr)
        return 1
    print(json.dumps(summary(batch), separators=(",", ":")), file=stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
