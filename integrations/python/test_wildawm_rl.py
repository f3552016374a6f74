"""Tests of wildawm_rl: the validator on hand-made batches and the client against a fake service.

Run from the repository root: python3 -m unittest discover -s integrations/python
"""

import copy
import io
import json
import os
import socket
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import wildawm_rl  # noqa: E402


def make_batch(g=2, segments=((2, 1), (1, 1)), dropped=1, tokens=True):
    """A valid batch: one ready group per entry of segments (the segment count of
    each of its g trajectories, cycled), then `dropped` mastered groups."""
    groups, samples = [], []
    ready = len(segments)
    for gi, counts in enumerate(segments):
        rewards = [1.0 if j % 2 == 0 else 0.05 for j in range(g)]
        mu = sum(rewards) / g
        sigma = (sum((r - mu) ** 2 for r in rewards) / g) ** 0.5
        groups.append({
            "index": gi, "task_id": f"task-{gi}", "state": "ready", "kappa": 1.0, "next_kappa": 1.0,
            "launched": g, "cancelled": 0, "k": g, "mu": mu, "sigma": sigma,
            "slots": list(range(g)), "rewards": rewards, "selected": list(range(g)), "successes": 1,
        })
        for j in range(g):
            count = counts[j % len(counts)]
            segs = []
            for si in range(count):
                # Prompt part (mask 0) then the model's tokens (mask 1).
                resp = [100 + si, 101 + si, 102 + si]
                mask = [0, 1, 1] if si > 0 else [1, 1, 1]
                lps = [0.0 if m == 0 else -0.5 for m in mask]
                segs.append({
                    "version": 1, "step": 1, "task_id": f"task-{gi}", "group_index": gi,
                    "trajectory_index": j, "rollout_id": f"r-{gi}-{j}", "slot": j,
                    "segment_index": si, "segment_count": count,
                    "prompt_token_ids": [1, 2, 3], "response_token_ids": resp, "loss_mask": mask,
                    "rollout_logprobs": lps, "status": "done", "finish_reason": "stop",
                    "weight_versions": ["v1"], "policy": "test", "reward": rewards[j],
                    "advantage": (rewards[j] - mu) / sigma, "format_failure": False, "v": rewards[j] == 1.0,
                    "checklist": [{"id": "c1", "pass": True}],
                    "k": g, "mu": mu, "sigma": sigma, "kappa": 1.0,
                })
            trainable = sum(sum(s["loss_mask"]) for s in segs)
            for s in segs:
                s["trajectory_trainable_tokens"] = trainable
                s["loss_weight"] = 1 / (trainable * g * ready)
            samples.extend(segs)
    for d in range(dropped):
        groups.append({
            "index": ready + d, "task_id": f"task-m{d}", "state": "mastered", "kappa": 1.0, "next_kappa": 1.0,
            "launched": g, "cancelled": 0, "k": g, "mu": 1.0, "sigma": 0.0,
            "slots": list(range(g)), "rewards": [1.0] * g, "successes": g,
        })
    return {
        "version": 1, "id": "step-000001", "step": 1, "status": "done",
        "request": {"step": 1, "tasks": ready + dropped, "g": g, "policy": "scripted:replay-ensemble"},
        "groups": groups, "samples": samples, "tokens": tokens,
        "stats": {"rollouts": g * (ready + dropped), "ready": ready, "mastered": dropped},
    }


def find(batch, rollout_id, segment_index=0):
    for s in batch["samples"]:
        if s["rollout_id"] == rollout_id and s["segment_index"] == segment_index:
            return s
    raise KeyError((rollout_id, segment_index))


class ValidateTest(unittest.TestCase):
    def test_good_batches_pass(self):
        for kwargs in ({}, {"g": 4, "segments": ((1,), (3, 1), (2,))}, {"dropped": 0}, {"segments": ()}):
            with self.subTest(kwargs=kwargs):
                batch = make_batch(**kwargs)
                self.assertEqual(wildawm_rl.batch_problems(batch), [])
                self.assertIs(wildawm_rl.validate_batch(batch), batch)

    def test_each_invariant_is_caught(self):
        def drop_trajectory(b):
            b["samples"] = [s for s in b["samples"] if s["rollout_id"] != "r-0-1"]

        def drop_segment(b):
            b["samples"] = [s for s in b["samples"] if (s["rollout_id"], s["segment_index"]) != ("r-0-0", 1)]

        def duplicate_segment(b):
            b["samples"].append(copy.deepcopy(find(b, "r-1-0")))

        def set_(rid, seg, **fields):
            return lambda b: find(b, rid, seg).update(fields)

        def both_trajectories_index_0(b):
            for s in b["samples"]:
                if s["rollout_id"] == "r-0-1":
                    s["trajectory_index"] = 0

        def response_longer(b):
            s = find(b, "r-0-0", 0)
            s["response_token_ids"] = s["response_token_ids"] + [7]

        def unready_group(b):
            for s in b["samples"]:
                if s["group_index"] == 1:
                    s["group_index"] = 2  # the mastered group

        cases = {
            "batch version": (lambda b: b.update(version=2), "batch version 2"),
            "sample version": (set_("r-0-0", 0, version=0), "version 0, want 1"),
            "status": (lambda b: b.update(status="running"), "batch status 'running'"),
            "lengths": (response_longer, "lengths 4, 3, 3"),
            "mask value": (set_("r-0-0", 0, loss_mask=[1, 2, 1]), "other than 0 and 1"),
            "logprob under mask 0": (set_("r-0-0", 1, rollout_logprobs=[-0.1, -0.5, -0.5]),
                                     "not 0 where loss_mask is 0"),
            "segment index": (set_("r-1-0", 0, segment_index=1), "segment_index 1 is not in [0, segment_count 1)"),
            "trajectories per group": (drop_trajectory, "1 trajectories in the samples, want G = 2"),
            "missing segment": (drop_segment, "segment indices [0], want each of 0..2-1 once"),
            "repeated segment": (duplicate_segment, "segment indices [0, 0]"),
            "advantage": (set_("r-0-0", 1, advantage=0.5), "different advantages"),
            "trainable tokens": (lambda b: [s.update(trajectory_trainable_tokens=99) for s in b["samples"]
                                            if s["rollout_id"] == "r-1-1"], "trajectory_trainable_tokens [99]"),
            "loss weight": (set_("r-1-1", 0, loss_weight=0.5), "loss_weight 0.5"),
            "trajectory index": (both_trajectories_index_0, "trajectory indices [0, 0]"),
            "sample of a dropped group": (unready_group, "is not a ready group"),
        }
        for name, (mutate, want) in cases.items():
            with self.subTest(name):
                batch = make_batch()
                mutate(batch)
                problems = wildawm_rl.batch_problems(batch)
                self.assertTrue(any(want in p for p in problems), f"want a problem with {want!r}, got {problems}")
                with self.assertRaises(wildawm_rl.InvalidBatch) as ctx:
                    wildawm_rl.validate_batch(batch)
                self.assertIn(want, str(ctx.exception))

    def test_group_samples(self):
        batch = make_batch(g=2, segments=((2, 1), (1, 3)))
        batch["samples"].reverse()  # order must come from the indices, not the list
        grouped = wildawm_rl.group_samples(batch)
        self.assertEqual(len(grouped), 2)
        self.assertEqual([[len(t) for t in grp] for grp in grouped], [[2, 1], [1, 3]])
        for gi, grp in enumerate(grouped):
            for j, traj in enumerate(grp):
                self.assertEqual({s["rollout_id"] for s in traj}, {f"r-{gi}-{j}"})
                self.assertEqual([s["segment_index"] for s in traj], list(range(len(traj))))


class FakeService:
    """A stdlib http.server standing in for `wildawm rl serve`.

    Step 1 answers 202, then 202 on the first poll and 200 on the second; step 2
    answers 200 at once (the step already done); step 3's batch fails; step 4's
    batch is invalid; any other step is a 400 naming the field."""

    def __init__(self, token=None):
        self.requests = []  # (method, path, body)
        self.token = token
        self.polls = 0
        self.batch = make_batch()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code, body):
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def refused(self):
                """As `rl serve --token-file`: 401 without the token, but on /health."""
                if fake.token is None or self.path == "/health":
                    return False
                if self.headers.get("Authorization") == "Bearer " + fake.token:
                    return False
                self.reply(401, {"error": "missing or wrong bearer token"})
                return True

            def do_POST(self):
                if self.refused():
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(("POST", self.path, body))
                step = body.get("step")
                if step in (1, 3, 4):
                    self.reply(202, {"id": f"step-{step:06d}", "status": "running"})
                elif step == 2:
                    self.reply(200, fake.batch)
                else:
                    self.reply(400, {"error": "tasks: 0: ask for at least one task per step (the paper uses 8)"})

            def do_GET(self):
                if self.refused():
                    return
                url = urllib.parse.urlsplit(self.path)
                fake.requests.append(("GET", self.path, None))
                if url.path == "/health":
                    return self.reply(200, {"status": "ok"})
                wait = urllib.parse.parse_qs(url.query).get("wait", [""])[0]
                if not wait.isdigit():
                    return self.reply(400, {"error": f"wait: {wait!r} is not a number of seconds"})
                if url.path == "/v1/batches/step-000001":
                    fake.polls += 1
                    if fake.polls == 1:
                        return self.reply(202, {"id": "step-000001", "status": "running"})
                    return self.reply(200, fake.batch)
                if url.path == "/v1/batches/step-000003":
                    failed = dict(fake.batch, id="step-000003", status="failed", error="instances: pool exhausted")
                    return self.reply(200, failed)
                if url.path == "/v1/batches/step-000004":
                    bad = copy.deepcopy(fake.batch)
                    bad["samples"][0]["advantage"] = 42.0
                    return self.reply(200, bad)
                self.reply(404, {"error": f"no batch {url.path.rsplit('/', 1)[-1]}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.fake = FakeService()
        self.addCleanup(self.fake.close)
        self.client = wildawm_rl.Client(self.fake.url, timeout=10)

    def test_running_then_done(self):
        batch = self.client.request_batch(
            1, 3, 2, engine="sglang+http://127.0.0.1:30000/v1#qwen3-8b",
            sampling={"temperature": 1.0, "max_tokens": 512}, policy_version="7", seed=5, wait=3)
        self.assertEqual(batch["id"], "step-000001")
        self.assertEqual(self.fake.polls, 2, "the client must poll again after a 202")
        method, path, body = self.fake.requests[0]
        self.assertEqual((method, path), ("POST", "/v1/batches"))
        self.assertEqual(body, {"step": 1, "tasks": 3, "g": 2, "engine": "sglang+http://127.0.0.1:30000/v1#qwen3-8b",
                                "sampling": {"temperature": 1.0, "max_tokens": 512}, "policy_version": "7", "seed": 5})
        self.assertEqual(self.fake.requests[1][1], "/v1/batches/step-000001?wait=3")
        wildawm_rl.validate_batch(batch)

    def test_already_done(self):
        batch = self.client.request_batch(2, 3, 2, policy="scripted:replay-ensemble", policy_params={"p": 1})
        self.assertEqual(batch["status"], "done")
        self.assertEqual(self.fake.polls, 0)
        self.assertEqual(self.fake.requests[0][2]["policy_params"], {"p": 1})
        self.assertNotIn("engine", self.fake.requests[0][2])

    def test_bad_request_names_the_field(self):
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            self.client.request_batch(9, 0, 2, policy="scripted:replay-ensemble")
        self.assertEqual(ctx.exception.status, 400)
        self.assertIn("tasks: 0: ask for at least one task", str(ctx.exception))

    def test_failed_batch(self):
        with self.assertRaises(wildawm_rl.BatchFailed) as ctx:
            self.client.request_batch(3, 3, 2, policy="scripted:replay-ensemble")
        self.assertIn("instances: pool exhausted", str(ctx.exception))

    def test_unknown_batch_is_404(self):
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            self.client.poll("step-999999", wait=0)
        self.assertEqual(ctx.exception.status, 404)

    def test_no_service(self):
        with socket.socket() as sock:  # a port nothing listens on
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        with self.assertRaises(wildawm_rl.WildawmError) as ctx:
            wildawm_rl.Client(f"http://127.0.0.1:{port}", timeout=2).health()
        self.assertIn("is `wildawm rl serve` running there?", str(ctx.exception))

    def test_health(self):
        self.assertEqual(self.client.health()["status"], "ok")

    def run_cli(self, *args):
        out, err = io.StringIO(), io.StringIO()
        code = wildawm_rl.main(["--url", self.fake.url, "--tasks", "3", "--g", "2", *args], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def test_cli_summary(self):
        code, out, err = self.run_cli("--step", "1", "--policy", "scripted:replay-ensemble")
        self.assertEqual(code, 0, err)
        self.assertEqual(out.count("\n"), 1, "the summary is one line")
        got = json.loads(out)
        self.assertEqual((got["groups"], got["ready"], got["samples"], got["trajectories"]), (3, 2, 5, 4))
        self.assertEqual(got["rewards"], [[1.0, 0.05], [1.0, 0.05]])

    def test_cli_invalid_batch_exits_1(self):
        code, out, err = self.run_cli("--step", "4", "--policy", "scripted:replay-ensemble")
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertIn("different advantages", err)

    def test_cli_refused_exits_2(self):
        code, out, err = self.run_cli("--step", "9", "--policy", "scripted:replay-ensemble")
        self.assertEqual(code, 2)
        self.assertIn("HTTP 400: tasks: 0", err)


class TokenTest(unittest.TestCase):
    """A service started with --token-file: the client sends the token it is given."""

    def setUp(self):
        self.fake = FakeService(token="s3cret")
        self.addCleanup(self.fake.close)
        for var in ("WILDAWM_TOKEN", "WILDAWM_TOKEN_FILE"):
            self.addCleanup(os.environ.pop, var, None)
            os.environ.pop(var, None)

    def test_no_token_is_401(self):
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            wildawm_rl.Client(self.fake.url, timeout=10).request_batch(2, 3, 2, policy="scripted:replay-ensemble")
        self.assertEqual(ctx.exception.status, 401)
        self.assertIn("no token was given", str(ctx.exception))

    def test_wrong_token_is_401(self):
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            wildawm_rl.Client(self.fake.url, timeout=10, token="nope").request_batch(2, 3, 2, policy="scripted:replay-ensemble")
        self.assertEqual(ctx.exception.status, 401)
        self.assertIn("the token given was refused", str(ctx.exception))

    def test_token_given(self):
        batch = wildawm_rl.Client(self.fake.url, timeout=10, token="s3cret").request_batch(2, 3, 2, policy="scripted:replay-ensemble")
        self.assertEqual(batch["status"], "done")

    def test_token_file_and_environment(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "token")
            with open(path, "w") as f:
                f.write("s3cret\n")
            self.assertEqual(wildawm_rl.Client(self.fake.url, token_file=path).token, "s3cret")
            os.environ["WILDAWM_TOKEN_FILE"] = path
            self.assertEqual(wildawm_rl.Client(self.fake.url).token, "s3cret")
            os.environ["WILDAWM_TOKEN"] = "from-env"
            self.assertEqual(wildawm_rl.Client(self.fake.url).token, "from-env")
            out, err = io.StringIO(), io.StringIO()
            code = wildawm_rl.main(["--url", self.fake.url, "--tasks", "3", "--g", "2", "--step", "2",
                                    "--policy", "scripted:replay-ensemble", "--token-file", path], stdout=out, stderr=err)
            self.assertEqual(code, 0, err.getvalue())
            with open(path, "w") as f:
                f.write("")
            with self.assertRaises(wildawm_rl.WildawmError):
                wildawm_rl.Client(self.fake.url, token_file=path)

    def test_health_needs_no_token(self):
        self.assertEqual(wildawm_rl.Client(self.fake.url).health()["status"], "ok")


class ScriptedService:
    """A fake service that plays a script of answers, and that can really go away:
    stop() closes its listening socket, start() listens again on the same port
    with a fresh memory, as a restarted `wildawm rl serve`.

    script maps "POST" and "GET" to lists of answers, used in order: (code,
    body) or (code, body, headers), "drop" (close the connection without an
    answer, as a process killed mid-request), ("sleep", seconds) before the
    default answer, or a callable(service) whose return value (None: the
default) is the answer.
    With its list empty, POST answers 202 running and GET the batch, unless
    known is False (a restarted service that lost the step: GET is 404 until
    a POST)."""

    def __init__(self, batch, script=None, port=0, known=True):
        self.batch = batch
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.requests = []
        self.known = known
        self.port = port
        self.server = None
        self.start()

    def answer(self, handler, method):
        queue = self.script.get(method) or []
        action = queue.pop(0) if queue else None
        if callable(action):
            action = action(self)
        if action == "drop":
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(action, tuple) and action[0] == "sleep":
            time.sleep(action[1])
            action = None
        if action is None:
            if method == "POST":
                self.known = True
                action = (202, {"id": "step-000001", "step": 1, "status": "running"})
            elif self.known:
                action = (200, self.batch)
            else:
                action = (404, {"error": "batch step-000001 was not requested: POST /v1/batches first"})
        code, body = action[0], action[1]
        headers = action[2] if len(action) > 2 else {}
        raw = json.dumps(body).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        for k, v in headers.items():
            handler.send_header(k, v)
        try:
            handler.end_headers()
            handler.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on this exchange (its timeout)

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(("POST", self.path, body))
                fake.answer(self, "POST")

            def do_GET(self):
                fake.requests.append(("GET", self.path, None))
                fake.answer(self, "GET")

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.thread.join(5)
            self.server = None

    def restart(self, down=0.0):
        """Go away (the socket closed) for `down` seconds and come back on the same port, knowing no step."""
        self.stop()
        time.sleep(down)
        self.known = False
        self.start()


class RecordingSleep:
    """Client._sleep that records each wait and waits only a little."""

    def __init__(self, cap=0.0):
        self.waits = []
        self.cap = cap

    def __call__(self, seconds):
        self.waits.append(seconds)
        time.sleep(min(seconds, self.cap))


OUTAGE = {"error": "engine sglang+http://127.0.0.1:30000/v1: connection refused: the step goes on by itself "
                   "when the engine answers: ask again after Retry-After", "retriable": True, "status": "running"}


class ResilienceTest(unittest.TestCase):
    """What a long run meets: outages (503), restarts (refused, dropped, 404), timeouts, steps out of order."""

    def service(self, **kw):
        fake = ScriptedService(make_batch(), **kw)
        self.addCleanup(fake.stop)
        return fake

    def client(self, fake, **kw):
        kw.setdefault("backoff", 0.05)
        kw.setdefault("max_backoff", 0.2)
        c = wildawm_rl.Client(fake.url, timeout=kw.pop("timeout", 5), **kw)
        c._sleep = RecordingSleep(cap=0.01)
        return c

    def test_503_then_200_honours_retry_after(self):
        fake = self.service(script={"POST": [(503, OUTAGE, {"Retry-After": "2"}), (503, OUTAGE, {"Retry-After": "3"})]})
        c = self.client(fake, max_backoff=10)
        batch = c.request_batch(1, 3, 2, engine="sglang+http://127.0.0.1:30000/v1#m", wait=1)
        self.assertEqual(batch["id"], "step-000001")
        self.assertEqual(c._sleep.waits, [2.0, 3.0], "the waits are the service's Retry-After")
        self.assertEqual(c.counts["retries"], 2)
        posts = [r for r in fake.requests if r[0] == "POST"]
        self.assertEqual(len(posts), 3)
        self.assertTrue(all(p[2] == posts[0][2] for p in posts), "every re-POST is the same request")

    def test_retry_after_is_cut_to_max_backoff(self):
        fake = self.service(script={"POST": [(503, OUTAGE, {"Retry-After": "3600"})]})
        c = self.client(fake, max_backoff=0.5)
        c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertEqual(c._sleep.waits, [0.5])

    def test_503_while_polling_reposts(self):
        # The engine goes out while the step runs: GET answers 503; the client
        # POSTs the same request again (a failed-retriable step needs it) and goes on.
        fake = self.service(script={"GET": [(202, {"id": "step-000001", "status": "running"}),
                                            (503, OUTAGE, {"Retry-After": "1"})]})
        c = self.client(fake)
        batch = c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertEqual(batch["status"], "done")
        self.assertEqual([r[0] for r in fake.requests], ["POST", "GET", "GET", "POST", "GET"])
        self.assertEqual(c.counts, {"retries": 1, "reposts": 1})

    def test_exponential_backoff_is_bounded(self):
        fake = self.service(script={"POST": [(503, OUTAGE)] * 10})
        c = self.client(fake, retries=4, backoff=0.1, max_backoff=0.5)
        with self.assertRaises(wildawm_rl.Unavailable) as ctx:
            c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertEqual(c._sleep.waits, [0.1, 0.2, 0.4, 0.5], "doubling from backoff, cut at max_backoff")
        self.assertIn("gave up after 4 retries", str(ctx.exception))
        self.assertIn("HTTP 503", str(ctx.exception))
        self.assertEqual(ctx.exception.last.status, 503)
        self.assertEqual(len(fake.requests), 5)

    def test_a_success_resets_the_count(self):
        # Two failures, a 202, two failures, the batch: never more than 2 in a row.
        fake = self.service(script={"POST": [(503, OUTAGE), (503, OUTAGE)],
                                    "GET": [(503, OUTAGE), (503, OUTAGE)]})
        c = self.client(fake, retries=2)
        self.assertEqual(c.request_batch(1, 3, 2, policy="p", wait=1)["status"], "done")
        self.assertEqual(c.counts["retries"], 4)

    def test_deadline(self):
        fake = self.service(script={"POST": [(503, OUTAGE)] * 1000})
        c = wildawm_rl.Client(fake.url, timeout=5, retries=1000, backoff=0.05, max_backoff=0.05, deadline=0.4)
        t0 = time.monotonic()
        with self.assertRaises(wildawm_rl.Unavailable) as ctx:
            c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertLess(time.monotonic() - t0, 3)
        self.assertIn("deadline", str(ctx.exception))

    def test_refused_until_the_service_comes_back(self):
        fake = self.service()
        fake.stop()  # nothing listens on the port
        c = self.client(fake, retries=100)
        c._sleep = RecordingSleep(cap=0.05)
        threading.Timer(0.4, fake.start).start()
        self.assertEqual(c.request_batch(1, 3, 2, policy="p", wait=1)["status"], "done")
        self.assertGreaterEqual(c.counts["retries"], 2)
        self.assertEqual(fake.requests[0][0], "POST")

    def test_restart_while_polling(self):
        # kill -9 mid-poll: the GET's connection drops, the listening socket
        # closes, and a new service comes up on the same port 0.2 s later,
        # knowing no step (its GET would be 404 until asked by a POST).
        restarted = threading.Event()

        def crash(f):
            threading.Thread(target=lambda: (f.restart(down=0.2), restarted.set()), daemon=True).start()
            return "drop"

        fake = self.service(script={"GET": [crash]})
        c = self.client(fake, retries=100)
        c._sleep = RecordingSleep(cap=0.05)
        batch = c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertTrue(restarted.is_set())
        self.assertEqual(batch["status"], "done")
        posts = [r for r in fake.requests if r[0] == "POST"]
        self.assertGreaterEqual(len(posts), 2, "the client POSTs the step again to the restarted service")
        self.assertEqual(posts[-1][2], posts[0][2])
        self.assertGreaterEqual(c.counts["reposts"], 1)
        self.assertGreaterEqual(c.counts["retries"], 1)

    def test_404_after_restart_reposts(self):
        # A restarted service that does not know the step: GET answers 404.
        fake = self.service(script={"GET": [lambda f: setattr(f, "known", False)]})
        c = self.client(fake)
        batch = c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertEqual(batch["status"], "done")
        self.assertEqual([r[0] for r in fake.requests], ["POST", "GET", "POST", "GET"])
        self.assertEqual(c.counts, {"retries": 0, "reposts": 1})

    def test_404_before_any_post_is_an_error(self):
        fake = self.service(known=False)
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            self.client(fake).poll("step-000001", wait=0)
        self.assertEqual(ctx.exception.status, 404)

    def test_connection_reset_and_timeout_are_retried(self):
        fake = self.service(script={"POST": ["drop"], "GET": [("sleep", 1.5)]})
        c = self.client(fake, timeout=0.5)
        batch = c.request_batch(1, 3, 2, policy="p", wait=0)
        self.assertEqual(batch["status"], "done")
        self.assertEqual(c.counts["retries"], 2, "the reset POST and the timed-out GET")

    def test_409_missing_step(self):
        msg = "step 5 before step 4: steps arrive in order; ask for step 4 first (or serve with --allow-gaps)"
        fake = self.service(script={"POST": [(409, {"error": msg, "missing_step": 4})]})
        c = self.client(fake)
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            c.request_batch(5, 3, 2, policy="p", wait=1)
        self.assertEqual(ctx.exception.status, 409)
        self.assertEqual(ctx.exception.message, msg, "the service's message, unchanged")
        self.assertEqual(ctx.exception.missing_step, 4)
        self.assertEqual(c.counts["retries"], 0, "a 409 is not retried")
        self.assertEqual(len(fake.requests), 1)

    def test_other_409_has_no_missing_step(self):
        fake = self.service(script={"POST": [(409, {"error": "step 1 was asked for with another request"})]})
        with self.assertRaises(wildawm_rl.RequestError) as ctx:
            self.client(fake).request_batch(1, 3, 2, policy="p", wait=1)
        self.assertIsNone(ctx.exception.missing_step)

    def test_400_is_not_retried(self):
        fake = self.service(script={"POST": [(400, {"error": "fill: \"x\": give \"drop\" or \"ready\""})]})
        c = self.client(fake)
        with self.assertRaises(wildawm_rl.RequestError):
            c.request_batch(1, 3, 2, policy="p", wait=1)
        self.assertEqual(len(fake.requests), 1)

    def test_unknown_fields_are_tolerated(self):
        batch = make_batch()
        batch["stats"].update({"prefix_breaks": 2, "staleness": 1, "filled": 3, "reused": 4, "a_later_field": [1]})
        for grp in batch["groups"]:
            grp["tries"] = 1
            grp["another_later_field"] = {"x": 1}
        batch["async"] = {"weight_version": "7"}
        batch["samples"][0]["prefix_break"] = True
        fake = ScriptedService(batch)
        self.addCleanup(fake.stop)
        got = self.client(fake).request_batch(1, 3, 2, policy="p", wait=1)
        wildawm_rl.validate_batch(got)
        self.assertEqual(got["stats"]["filled"], 3)
        self.assertEqual(wildawm_rl.summary(got)["ready"], 2)

    def test_fill_is_sent_and_checked(self):
        fake = self.service()
        self.client(fake).request_batch(1, 3, 2, policy="p", wait=1, fill="ready")
        self.assertEqual(fake.requests[0][2]["fill"], "ready")
        with self.assertRaises(ValueError) as ctx:
            wildawm_rl.build_request(1, 3, 2, fill="pad")
        self.assertIn("fill 'pad'", str(ctx.exception))

    def test_bad_options(self):
        for kw in ({"retries": -1}, {"backoff": 0}, {"backoff": 2, "max_backoff": 1}, {"deadline": 0}):
            with self.assertRaises(ValueError, msg=kw):
                wildawm_rl.Client("http://127.0.0.1:1", **kw)

    def test_retry_after_http_date(self):
        self.assertEqual(wildawm_rl._retry_after("7"), 7.0)
        self.assertIsNone(wildawm_rl._retry_after("soon"))
        self.assertEqual(wildawm_rl._retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0)


if __name__ == "__main__":
    unittest.main()
