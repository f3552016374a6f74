"""Tests of the slime plugin without slime: a stand-in Sample and stand-in slime modules.

Run from the repository root: python3 -m unittest discover -s integrations/slime
"""

import json
import os
import sys
import tempfile
import threading
import types
import unittest
from dataclasses import dataclass, field
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import wildawm_rl  # noqa: E402
import wildawm_slime  # noqa: E402
from test_wildawm_rl import make_batch  # noqa: E402


@dataclass
class StandInSample:
    """The fields of slime/utils/types.py Sample that the plugin writes."""

    group_index: int | None = None
    index: int | None = None
    prompt: str = ""
    tokens: list = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    reward: float | None = None
    loss_mask: list | None = None
    weight_versions: list = field(default_factory=list)
    rollout_log_probs: list | None = None

    class Status(Enum):
        PENDING = "pending"
        COMPLETED = "completed"
        TRUNCATED = "truncated"
        ABORTED = "aborted"
        FAILED = "failed"

    status: Status = Status.PENDING
    metadata: dict = field(default_factory=dict)


def slime_args(**over):
    args = dict(
        sglang_router_ip="10.1.2.3", sglang_router_port=30000, hf_checkpoint="/models/Qwen3-8B/",
        rollout_batch_size=8, n_samples_per_prompt=4, rollout_temperature=1.0, rollout_top_p=1.0,
        rollout_max_response_len=8192, rollout_seed=42, advantage_estimator="grpo", normalize_advantages=False,
        rewards_normalization=True, custom_reward_post_process_path=wildawm_slime.POST_PROCESS_PATH,
    )
    args.update(over)
    return SimpleNamespace(**args)


class BuildSamplesTest(unittest.TestCase):
    def test_segments_become_samples(self):
        batch = make_batch(g=2, segments=((2, 1), (1, 3)))
        # Distinct advantages per rollout and a truncated one, so the mapping is visible.
        for s in batch["samples"]:
            if s["rollout_id"] == "r-1-1":
                s["finish_reason"] = "length"
        groups = wildawm_slime.build_samples(batch, StandInSample)
        self.assertEqual([[len(t) for t in g] for g in groups], [[2, 1], [1, 3]])
        by_id = {(s["rollout_id"], s["segment_index"]): s for s in batch["samples"]}
        seen_index, seen_rollout = set(), {}
        for gi, group in enumerate(groups):
            for trajectory in group:
                self.assertEqual(len({s.rollout_id for s in trajectory}), 1, "siblings share Sample.rollout_id")
                self.assertEqual(len({s.metadata[wildawm_slime.META_ROLLOUT] for s in trajectory}), 1)
                for s in trajectory:
                    src = by_id[(s.metadata[wildawm_slime.META_ROLLOUT], s.metadata["wildawm_segment_index"])]
                    self.assertEqual(s.tokens, src["prompt_token_ids"] + src["response_token_ids"])
                    self.assertEqual(s.response_length, len(src["response_token_ids"]))
                    self.assertEqual(s.tokens[-s.response_length:], src["response_token_ids"])
                    self.assertEqual(s.loss_mask, src["loss_mask"])
                    self.assertEqual(len(s.loss_mask), s.response_length)
                    self.assertEqual(s.rollout_log_probs, src["rollout_logprobs"])
                    self.assertEqual(s.reward, src["reward"])
                    self.assertEqual(s.metadata[wildawm_slime.META_ADVANTAGE], src["advantage"])
                    self.assertEqual(s.metadata["raw_reward"], src["reward"])
                    self.assertEqual(s.group_index, gi)
                    self.assertEqual(s.weight_versions, ["v1"])
                    want = StandInSample.Status.TRUNCATED if src["rollout_id"] == "r-1-1" else StandInSample.Status.COMPLETED
                    self.assertEqual(s.status, want)
                    self.assertNotIn(s.index, seen_index)
                    seen_index.add(s.index)
                    seen_rollout.setdefault(s.rollout_id, src["rollout_id"])
                    self.assertEqual(seen_rollout[s.rollout_id], src["rollout_id"], "one int id per trajectory")
        self.assertEqual(len(seen_rollout), 4)

    def test_advantage_as_reward(self):
        batch = make_batch()
        groups = wildawm_slime.build_samples(batch, StandInSample, advantage_as_reward=True)
        for s in (s for g in groups for t in g for s in t):
            self.assertEqual(s.reward, s.metadata[wildawm_slime.META_ADVANTAGE])
            self.assertNotEqual(s.reward, s.metadata["raw_reward"])

    def test_refuses_untokenized_and_invalid_batches(self):
        with self.assertRaisesRegex(ValueError, "no token ids"):
            wildawm_slime.build_samples(make_batch(tokens=False), StandInSample)
        bad = make_batch()
        bad["samples"][0]["loss_mask"] = [1, 1]
        with self.assertRaisesRegex(wildawm_slime.wildawm_rl.InvalidBatch, "lengths"):
            wildawm_slime.build_samples(bad, StandInSample)


class PostProcessTest(unittest.TestCase):
    def test_returns_raw_rewards_and_advantages(self):
        batch = make_batch(g=2, segments=((2, 1),))
        flat = [s for g in wildawm_slime.build_samples(batch, StandInSample) for t in g for s in t]
        raw, adv = wildawm_slime.post_process_rewards(slime_args(), flat)
        by_id = {(s["rollout_id"], s["segment_index"]): s for s in batch["samples"]}
        srcs = [by_id[(s.metadata[wildawm_slime.META_ROLLOUT], s.metadata["wildawm_segment_index"])] for s in flat]
        self.assertEqual(raw, [s["reward"] for s in srcs])
        self.assertEqual(adv, [s["advantage"] for s in srcs])
        self.assertEqual(adv[0], adv[1], "both segments of a rollout carry its advantage")
        for got, want in zip(adv, [1.0, 1.0, -1.0]):
            self.assertAlmostEqual(got, want)

    def test_refuses_foreign_samples(self):
        with self.assertRaisesRegex(ValueError, "wildawm_advantage"):
            wildawm_slime.post_process_rewards(slime_args(), [StandInSample(reward=1.0)])


class ConfigTest(unittest.TestCase):
    def test_request(self):
        req = wildawm_slime.batch_request(slime_args(wildawm_max_turns=256, wildawm_context_tokens=102400), 0)
        self.assertEqual(req, {
            "step": 1, "tasks": 8, "g": 4, "engine": "sglang+http://10.1.2.3:30000/v1#Qwen3-8B",
            "sampling": {"temperature": 1.0, "top_p": 1.0, "max_tokens": 8192, "context_tokens": 102400,
                         "max_turns": 256, "seed": 42},
            "policy_version": "0",
        })
        self.assertEqual(wildawm_slime.batch_request(slime_args(wildawm_model="qwen3-8b"), 6)["engine"],
                         "sglang+http://10.1.2.3:30000/v1#qwen3-8b")
        self.assertEqual(wildawm_slime.batch_request(slime_args(), 6)["step"], 7)

    def test_no_router(self):
        with self.assertRaisesRegex(wildawm_slime.ConfigError, "sglang_router_ip"):
            wildawm_slime.engine_spec(slime_args(sglang_router_ip=None))

    def test_advantage_mode(self):
        self.assertEqual(wildawm_slime.advantage_mode(slime_args()), "hook")
        self.assertEqual(wildawm_slime.advantage_mode(
            slime_args(custom_reward_post_process_path=None, rewards_normalization=False)), "reward")
        bad = {
            "renormalised": (dict(custom_reward_post_process_path=None), "renormalise"),
            "other hook": (dict(custom_reward_post_process_path="mine.post"), "must be wildawm_slime"),
            "whitened": (dict(normalize_advantages=True), "--normalize-advantages"),
            "ppo": (dict(advantage_estimator="ppo"), "use grpo"),
        }
        for name, (over, want) in bad.items():
            with self.subTest(name), self.assertRaisesRegex(wildawm_slime.ConfigError, want):
                wildawm_slime.advantage_mode(slime_args(**over))


class StandInSlime:
    """slime.utils.types.Sample and slime.rollout.base_types.RolloutFnTrainOutput in sys.modules."""

    NAMES = ("slime", "slime.utils", "slime.utils.types", "slime.rollout", "slime.rollout.base_types")

    def __enter__(self):
        self.saved = {n: sys.modules.get(n) for n in self.NAMES}
        mods = {n: types.ModuleType(n) for n in self.NAMES}
        mods["slime.utils.types"].Sample = StandInSample

        @dataclass
        class RolloutFnTrainOutput:
            samples: list
            metrics: dict = None

        mods["slime.rollout.base_types"].RolloutFnTrainOutput = RolloutFnTrainOutput
        sys.modules.update(mods)
        return self

    def __exit__(self, *exc):
        for n, m in self.saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


class GenerateRolloutTest(unittest.TestCase):
    def serve(self, batch, token=None):
        posts = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                code, body = 200, batch
                if token is not None and self.headers.get("Authorization") != "Bearer " + token:
                    code, body = 401, {"error": "missing or wrong bearer token"}
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()

        def stop():
            server.shutdown()
            server.server_close()
            thread.join(5)

        self.addCleanup(stop)
        return f"http://127.0.0.1:{server.server_address[1]}", posts

    def test_calls_the_service_and_returns_compact_groups(self):
        batch = make_batch(g=4, segments=((2, 1), (1,)))
        batch["request"] = {"step": 3, "tasks": 3, "g": 4, "engine": "sglang+http://10.1.2.3:30000/v1#Qwen3-8B"}
        url, posts = self.serve(batch)
        with StandInSlime():
            out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url, rollout_batch_size=3), 2, None)
        self.assertEqual(posts[0]["step"], 3)
        self.assertEqual(posts[0]["g"], 4)
        self.assertEqual(posts[0]["tasks"], 3)
        self.assertEqual(posts[0]["engine"], "sglang+http://10.1.2.3:30000/v1#Qwen3-8B")
        self.assertEqual(len(out.samples), 2)
        self.assertTrue(all(len(g) == 4 for g in out.samples))
        self.assertIsInstance(out.samples[0][0][0], StandInSample)
        self.assertEqual(out.metrics["rollout/wildawm/ready"], 2)

    def test_passes_the_token(self):
        batch = make_batch(g=4, segments=((2, 1), (1,)))
        batch["request"] = {"step": 3, "tasks": 3, "g": 4}
        url, _ = self.serve(batch, token="s3cret")
        for var in ("WILDAWM_TOKEN", "WILDAWM_TOKEN_FILE"):
            self.addCleanup(os.environ.pop, var, None)
            os.environ.pop(var, None)
        with StandInSlime(), self.assertRaises(wildawm_rl.RequestError) as ctx:
            wildawm_slime.generate_rollout(slime_args(wildawm_url=url, rollout_batch_size=3), 2, None)
        self.assertEqual(ctx.exception.status, 401)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "token")
            with open(path, "w") as f:
                f.write("s3cret\n")
            with StandInSlime():
                out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url, wildawm_token_file=path, rollout_batch_size=3), 2, None)
            self.assertEqual(len(out.samples), 2)
            os.environ["WILDAWM_TOKEN_FILE"] = path
            with StandInSlime():
                out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url, rollout_batch_size=3), 2, None)
            self.assertEqual(len(out.samples), 2)

    def test_a_step_without_ready_tasks_fails_loudly(self):
        batch = make_batch(segments=(), dropped=3)
        url, _ = self.serve(batch)
        with StandInSlime(), self.assertRaisesRegex(RuntimeError, "no ready task"):
            wildawm_slime.generate_rollout(slime_args(wildawm_url=url), 0, None)

    def test_evaluation_is_refused(self):
        with self.assertRaisesRegex(NotImplementedError, "wildawm eval"):
            wildawm_slime.generate_rollout(slime_args(), 0, None, evaluation=True)

    def test_imports_without_slime(self):
        # This module imported wildawm_slime with no slime anywhere; the stand-ins come and go.
        self.assertNotIn("slime", sys.modules)


if __name__ == "__main__":
    unittest.main()
