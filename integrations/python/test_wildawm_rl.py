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


if __name__ == "__main__":
    unittest.main()
