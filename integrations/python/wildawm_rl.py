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

A long run meets outages, so the client retries what a retry can fix:
connection refused or reset, timeouts, and HTTP 502/503/504 (the service
answers a long poll that ends while the trainer's inference engine is out
with 503 {"error", "retriable": true} and Retry-After, which is honoured). It waits backoff, 2 x
backoff, ... up to max_backoff between tries, gives up after `retries`
failures in a row (a success resets the count) or when the deadline passes,
and then raises Unavailable. While it waits for a batch it re-POSTs the same
request after any such failure and after a 404 of the batch (a restarted
service may not know the step until it is asked again): the service computes
a step once and answers a repeated identical request with the same batch, so a
re-POST never runs a step twice. Client.counts tells how many retries and
re-POSTs it made. A 409 naming a missing step (steps out of order) is a
RequestError whose missing_step is that step. Fields the client does not know
(in a batch, its stats or its groups) are kept and ignored.
"""

import argparse
import email.utils
import http.client
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

DEFAULT_RETRIES = 10
"""Failures in a row (refused, reset, timed out, 502/503/504) the client retries before it gives up."""

DEFAULT_BACKOFF = 1.0
"""Seconds before the first retry; each further one doubles it, up to DEFAULT_MAX_BACKOFF."""

DEFAULT_MAX_BACKOFF = 60.0
"""The longest wait between two tries (a longer Retry-After is cut to it)."""

RETRIABLE_STATUS = (502, 503, 504)
"""HTTP statuses a retry may fix: the service (or a proxy before it) is out for a while."""


class WildawmError(Exception):
    """Any failure of a call to the rollout service."""


class RequestError(WildawmError):
    """The service refused a request (HTTP 4xx or 5xx); message is its "error", unchanged.

    body is the decoded answer (None when it was not JSON). missing_step is
    the step a 409 names when steps were asked for out of order ("step 5
    before step 4 ..."): ask for that step first. retry_after is the
    seconds a 503 asked the client to wait (None without Retry-After)."""

    def __init__(self, method, url, status, message, body=None, retry_after=None):
        self.method = method
        self.url = url
        self.status = status
        self.message = message
        self.body = body
        self.retry_after = retry_after
        missing = body.get("missing_step") if isinstance(body, dict) else None
        self.missing_step = missing if isinstance(missing, int) and not isinstance(missing, bool) else None
        super().__init__(f"{method} {url}: HTTP {status}: {message}")

    @property
    def retriable(self):
        """Whether a retry may fix it: 502/503/504 (the service says "retriable": true on its 503s)."""
        return self.status in RETRIABLE_STATUS


class Unavailable(WildawmError):
    """The service stayed unreachable (or answered 503) through every retry; last is the last failure."""

    def __init__(self, message, last=None):
        self.last = last
        super().__init__(message)


class Transient(WildawmError):
    """One exchange failed in a way a retry may fix: refused, reset or timed out."""


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

    def __init__(self, base_url, timeout=30.0, token=None, token_file=None, retries=DEFAULT_RETRIES,
                 backoff=DEFAULT_BACKOFF, max_backoff=DEFAULT_MAX_BACKOFF, deadline=None):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url {base_url!r}: give the service's http:// address, e.g. http://127.0.0.1:8020")
        if int(retries) < 0:
            raise ValueError(f"retries {retries}: give 0 (no retry) or more")
        if not float(backoff) > 0 or not float(max_backoff) >= float(backoff):
            raise ValueError(f"backoff {backoff}, max_backoff {max_backoff}: give 0 < backoff <= max_backoff seconds")
        if deadline is not None and not float(deadline) > 0:
            raise ValueError(f"deadline {deadline}: give seconds above 0, or None for no limit")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.token = resolve_token(token, token_file)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.deadline = None if deadline is None else float(deadline)
        # What the client did to get through failures, over its life.
        self.counts = {"retries": 0, "reposts": 0}
        self._sleep = time.sleep
        self._clock = time.monotonic

    def _pause(self, failures, err, until):
        """Wait before try failures+1 after err: Retry-After if given, else the backoff; bounded by until."""
        wait = min(self.max_backoff, self.backoff * 2 ** (failures - 1))
        if isinstance(err, RequestError) and err.retry_after is not None:
            wait = min(self.max_backoff, max(err.retry_after, 0.0))
        if until is not None:
            wait = min(wait, max(0.0, until - self._clock()))
        self.counts["retries"] += 1
        self._sleep(wait)

    def _give_up(self, failures, err, until, start):
        """The Unavailable to raise after err, or None while retries and time remain."""
        if failures > self.retries:
            return Unavailable(f"{err} (gave up after {failures - 1} retries over {self._clock() - start:.1f}s; "
                               "raise retries= or check the service and its engine)", err)
        if until is not None and self._clock() >= until:
            return Unavailable(f"{err} (gave up at the deadline, {until - start:.1f}s, after "
                               f"{failures - 1} retries; raise deadline=)", err)
        return None

    def _retrying(self, fn, until=None):
        """fn() retried through transient failures (refused, reset, timed out, 502/503/504)."""
        start = self._clock()
        failures = 0
        while True:
            try:
                return fn()
            except (Transient, RequestError) as err:
                if isinstance(err, RequestError) and not err.retriable:
                    raise
                failures += 1
                stop = self._give_up(failures, err, until, start)
                if stop is not None:
                    raise stop from None
                self._pause(failures, err, until)

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
            try:
                raw = e.read()
            except OSError:
                raw = b""
            message = _error_message(raw, e.reason)
            if e.code == 401:
                given = "the token given was refused" if self.token else "no token was given"
                message += f" ({given}: pass token= or token_file=, or set $WILDAWM_TOKEN or $WILDAWM_TOKEN_FILE)"
            try:
                decoded = json.loads(raw)
            except ValueError:
                decoded = None
            raise RequestError(method, url, e.code, message, body=decoded,
                               retry_after=_retry_after(e.headers.get("Retry-After") if e.headers else None)) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", e)
            raise Transient(f"{method} {url}: {reason} (is `wildawm rl serve` running there?)") from e
        try:
            return status, json.loads(raw)
        except ValueError:
            raise WildawmError(f"{method} {url}: HTTP {status} with a body that is not JSON: {raw[:200]!r}") from None

    def health(self):
        """GET /health: the service's status object (no retry: it says whether the service is up now)."""
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
        fill=None,
    ):
        """Ask for train step `step`'s batch and wait until it is done.

        fill is what the service does when it drops groups (mastered,
        exhausted, abandoned): "drop" (the service's default) returns the
        ready groups of the tasks sampled, "ready" samples further tasks of
        the split until `tasks` groups are ready or the split runs out.

        Give the trainer's inference engine as engine ("sglang+http://HOST:PORT/v1#MODEL")
        or an offline policy ("scripted:replay-ensemble") with its policy_params.
        Returns the batch (status "done"). Raises RequestError when the service refuses
        the request (400 names the field; 409 means the step was asked for with another
        request, or names a missing_step when steps came out of order), BatchFailed
        when the batch failed, Unavailable when the service stayed out through
        the retries, and WildawmError when deadline seconds (None: the client's
        deadline; no limit without one) pass first. Through connection failures,
        503s and a restart (a 404 for the batch) it re-POSTs the same request.
        """
        request = build_request(step, tasks, g, engine, sampling, policy_version, policy, policy_params, seed, harness,
                                fill)
        start = self._clock()
        deadline = self.deadline if deadline is None else float(deadline)
        until = None if deadline is None else start + deadline
        failures = 0
        posted = False
        batch_id = None
        while True:
            try:
                if not posted:
                    status, body = self.submit(request)
                    posted = True
                else:
                    w = wait
                    if until is not None:
                        left = until - self._clock()
                        if left <= 0:
                            raise WildawmError(f"batch {batch_id} still running after {deadline}s")
                        w = min(w, max(1, int(left)))
                    status, body = self.poll(batch_id, wait=w)
            except (Transient, RequestError) as err:
                if isinstance(err, RequestError) and err.status == 404 and posted:
                    # A restarted service that lost the step: ask for it again.
                    self.counts["reposts"] += 1
                    posted = False
                    continue
                if isinstance(err, RequestError) and not err.retriable:
                    raise
                failures += 1
                stop = self._give_up(failures, err, until, start)
                if stop is not None:
                    raise stop from None
                self._pause(failures, err, until)
                if posted:
                    # POST again rather than poll: a restarted service learns
                    # the step from it, a running one answers 202 or the batch.
                    self.counts["reposts"] += 1
                    posted = False
                continue
            failures = 0
            if status == 200:
                return _finished(body)
            if status != 202 or not isinstance(body, dict) or not body.get("id"):
                raise WildawmError(f"unexpected answer HTTP {status}: {str(body)[:200]}")
            batch_id = body["id"]


FILLS = ("drop", "ready")
"""The values of a request's fill (trainer.FillDrop, trainer.FillReady)."""


def build_request(step, tasks, g, engine=None, sampling=None, policy_version=None, policy=None,
                  policy_params=None, seed=None, harness=None, fill=None):
    """The POST /v1/batches body (trainer.Request); fields left None are left out."""
    if fill is not None and fill not in FILLS:
        raise ValueError(f"fill {fill!r}: give \"drop\" (the ready groups of the tasks sampled) or "
                         f"\"ready\" (sample further tasks until `tasks` groups are ready)")
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
        "fill": fill,
    }
    for key, value in optional.items():
        if value is not None and value != {}:
            request[key] = value
    return request


def _retry_after(value):
    """Retry-After's seconds (a number or an HTTP date), None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


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
    p.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                   help=f"failures in a row to retry, with backoff (default {DEFAULT_RETRIES})")
    p.add_argument("--fill", choices=FILLS, help="drop (default): the ready groups of the tasks sampled; "
                                                 "ready: sample further tasks until --tasks groups are ready")
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
        client = Client(args.url, timeout=args.timeout, token_file=args.token_file, retries=args.retries)
        batch = client.request_batch(
            args.step, args.tasks, args.g, engine=args.engine, policy_version=args.policy_version,
            policy=args.policy, policy_params=params, seed=args.seed, deadline=args.deadline, fill=args.fill)
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
