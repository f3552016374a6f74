"""Tests of the slime plugin without slime: a stand-in Sample and stand-in slime modules.

Run from the repository root: python3 -m unittest discover -s integrations/slime
"""

import gzip
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
    """The fields of slime/utils/types.py Sample that the plugin writes and slime's checks read."""

    group_index: int | None = None
    index: int | None = None
    rollout_id: int | None = None
    prompt: str = ""
    tokens: list = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    reward: float | None = None
    loss_mask: list | None = None
    weight_versions: list = field(default_factory=list)
    rollout_log_probs: list | None = None
    rollout_top_p_token_ids: list | None = None
    rollout_top_p_token_offsets: list | None = None
    remove_sample: bool = False

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
        global_batch_size=32, use_dynamic_batch_size=True, max_tokens_per_gpu=16384, wildawm_backoff=0.01,
        sglang_tool_call_parser="qwen", sglang_reasoning_parser="qwen3",
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
            "policy_version": "0", "fill": "ready",
        })
        self.assertEqual(wildawm_slime.batch_request(slime_args(), 0)["sampling"],
                         {"temperature": 1.0, "top_p": 1.0, "max_tokens": 8192, "context_tokens": 102400,
                          "max_turns": 256, "seed": 42}, "the paper's budgets by default")
        self.assertEqual(wildawm_slime.batch_request(slime_args(wildawm_context_tokens=32768), 0)["sampling"]
                         ["context_tokens"], 32768)
        self.assertEqual(wildawm_slime.batch_request(slime_args(wildawm_fill="pad"), 0)["fill"], "drop")
        self.assertEqual(wildawm_slime.batch_request(slime_args(wildawm_fill="drop"), 0)["fill"], "drop")
        with self.assertRaisesRegex(wildawm_slime.ConfigError, "wildawm_fill 'fill'"):
            wildawm_slime.batch_request(slime_args(wildawm_fill="fill"), 0)

    def test_top_p_is_refused(self):
        with self.assertRaisesRegex(wildawm_slime.ConfigError, "--rollout-top-p 0.95: use --rollout-top-p 1.0"):
            wildawm_slime.batch_request(slime_args(rollout_top_p=0.95), 0)

    def test_slime_unit(self):
        self.assertEqual(wildawm_slime.slime_unit(slime_args()), 32)
        with self.assertRaisesRegex(wildawm_slime.ConfigError, "--global-batch-size"):
            wildawm_slime.slime_unit(slime_args(global_batch_size=None))
        with self.assertRaisesRegex(wildawm_slime.ConfigError, "--use-dynamic-batch-size"):
            wildawm_slime.slime_unit(slime_args(use_dynamic_batch_size=False))
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


SLIME_COMMIT = "624b824a898ab0ec1fcb4d373004c7f3852bf515"
"""The THUDM/slime commit whose checks SlimeContract re-implements (2026-08-21)."""


class SlimeContract:
    """slime's checks on a custom rollout function's output, re-implemented (read, not copied)
    from slime at SLIME_COMMIT, in the order slime runs them for a train step
    (RolloutManager.generate in slime/ray/rollout.py):

    1. call_rollout_fn (slime/rollout/base_types.py): a RolloutFnTrainOutput, or a bare list (legacy).
    2. validate_rollout_id_annotated (slime/observability/rollout_data_utils.py): a leaf
       list[Sample] at depth >= 2 with more than one sample (the "compact" shape,
       prompt x rollout x samples) has rollout_id set on every sibling, all equal.
    3. RolloutManager._get_rollout_data: flattens with `while isinstance(data[0], list)`,
       so an empty output is an IndexError.
    4. RolloutManager._post_process_rewards / _convert_samples_to_train_data: the
       custom post-process hook's two lists as long as the samples; rollout_id None
       replaced by unused ints; loss_mask None -> [1] * response_length; asserted
       len(loss_mask) == response_length; remove_sample zeroes the mask;
       rollout_mask_sums = the loss-mask total of each sample's rollout; with
       --rollout-top-p != 1.0 every sample has rollout_top_p_token_ids and
       rollout_top_p_token_offsets (response_length + 1 offsets, the last equal to
       the ids' length). rollout_log_probs, when the first sample has them, are
       taken from every sample and read one per response token by the loss.
    5. RolloutManager._split_train_data_by_dp -> build_dp_schedule
       (slime/utils/dp_schedule.py): samples grouped by rollout id in first-seen
       order; steps = rollouts // global_batch_size, asserted >= 1 ("num_rollouts
       (N) < global_batch_size (M)"); trailing rollouts dropped; each step has at
       least dp_size samples; with dynamic batches a step needs at least
       dp_size * mb_group samples to split into an aligned micro-batch count.
    6. loss_function (slime/backends/megatron_utils/loss.py) with
       get_sum_of_sample_mean (slime/backends/megatron_utils/cp_utils.py), per-rollout
       mean (no --calculate-per-token-loss): a trainable token of sample i in a step
       weighs rewards[i] / clamp_min(rollout_mask_sums[i], 1) / global_batch_size in
       that step's loss (num_microbatches and the data-parallel size cancel Megatron's
       averaging); with GRPO every token's advantage is rewards[i] (get_grpo_returns,
       slime/utils/ppo_utils.py).

    run returns what slime would train: the steps (lists of sample positions), the
    dropped trailing rollouts and each sample's per-token loss coefficient.
    """

    def __init__(self, args, dp_size=1, mb_group=1, vpp_size=1):
        self.args = args
        self.dp_size = dp_size
        self.align_to = dp_size * (mb_group if vpp_size > 1 else 1)

    @staticmethod
    def validate_rollout_id_annotated(node, depth=0):
        if isinstance(node, StandInSample):
            return
        assert isinstance(node, list), f"unexpected rollout output node type: {type(node).__name__}"
        if node and isinstance(node[0], StandInSample):
            if depth >= 2 and len(node) > 1:
                rids = [x.rollout_id for x in node]
                missing = [i for i, r in enumerate(rids) if r is None]
                assert not missing, f"Compact rollout returned {len(node)} samples but rollout_id is unset on {missing}"
                assert len(set(rids)) == 1, f"Sibling samples from one compact rollout must share rollout_id; got {rids}."
            return
        for item in node:
            SlimeContract.validate_rollout_id_annotated(item, depth + 1)

    def run(self, output):
        args = self.args
        data = output if isinstance(output, list) else output.samples
        self.validate_rollout_id_annotated(data)
        while isinstance(data[0], list):
            data = [x for sub in data for x in sub]
        samples = data
        for x in samples:
            assert isinstance(x, StandInSample), f"not a Sample: {type(x).__name__}"
        hook = getattr(args, "custom_reward_post_process_path", None)
        if hook:
            assert hook == wildawm_slime.POST_PROCESS_PATH
            raw, rewards = wildawm_slime.post_process_rewards(args, samples)
        else:
            assert not args.rewards_normalization, "this re-implementation covers the hook and the no-normalisation path"
            raw = rewards = [x.reward for x in samples]
        assert len(raw) == len(samples)
        assert len(rewards) == len(samples)
        rollout_ids = [x.rollout_id for x in samples]
        used = {r for r in rollout_ids if r is not None}
        tmp = 0
        for i, r in enumerate(rollout_ids):
            if r is None:
                while tmp in used:
                    tmp += 1
                rollout_ids[i] = tmp
                used.add(tmp)
        masks = []
        for x in samples:
            assert len(x.tokens) >= x.response_length >= 1, "tokens hold the prompt and the response"
            if x.loss_mask is None:
                x.loss_mask = [1] * x.response_length
            assert len(x.loss_mask) == x.response_length, \
                f"loss mask length {len(x.loss_mask)} != response length {x.response_length}"
            if x.remove_sample:
                x.loss_mask = [0] * x.response_length
            masks.append(x.loss_mask)
        total = {}
        for r, m in zip(rollout_ids, masks):
            total[r] = total.get(r, 0) + sum(m)
        mask_sums = [total[r] for r in rollout_ids]
        if samples[0].rollout_log_probs is not None:
            for x in samples:
                assert x.rollout_log_probs is not None and len(x.rollout_log_probs) == x.response_length
        if getattr(args, "rollout_top_p", 1.0) != 1.0:
            for x in samples:
                assert x.rollout_top_p_token_ids is not None
                assert x.rollout_top_p_token_offsets is not None
                assert len(x.rollout_top_p_token_offsets) == x.response_length + 1
                assert int(x.rollout_top_p_token_offsets[-1]) == len(x.rollout_top_p_token_ids)
        # build_dp_schedule
        gbs = args.global_batch_size
        by_rollout = {}
        for pos, r in enumerate(rollout_ids):
            by_rollout.setdefault(r, []).append(pos)
        order = list(by_rollout)
        num_steps = len(order) // gbs
        assert num_steps >= 1, (f"num_rollouts ({len(order)}) < global_batch_size ({gbs}); "
                                "need at least one rollout per step.")
        steps = []
        for k in range(num_steps):
            positions = [p for r in order[k * gbs:(k + 1) * gbs] for p in by_rollout[r]]
            assert len(positions) >= self.dp_size, f"step {k}: {len(positions)} samples < dp_size {self.dp_size}"
            assert args.use_dynamic_batch_size, "static micro-batches: not re-implemented (the plugin refuses them)"
            assert len(positions) >= self.align_to, f"step {k}: {len(positions)} samples below the alignment {self.align_to}"
            steps.append(positions)
        dropped = len(order) - num_steps * gbs
        coef = [0.0] * len(samples)
        for positions in steps:
            for p in positions:
                coef[p] = rewards[p] / max(mask_sums[p], 1) / gbs
        return {"samples": samples, "rewards": rewards, "raw": raw, "mask_sums": mask_sums, "steps": steps,
                "dropped_rollouts": dropped, "coef": coef}


def contract_batch(g=4, ready_segments=((1, 2), (3, 1), (1,), (2,), (1, 1, 2), (1,)), mastered=1, exhausted=1):
    """A batch as `wildawm rl serve` returns for 8 tasks: 6 ready groups (with compacted
    trajectories: more samples than rollouts), one mastered and one exhausted group
    (fewer rollouts than tasks x G), distinct rewards; valid under wildawm_rl."""
    batch = make_batch(g=g, segments=ready_segments, dropped=mastered + exhausted)
    ready = len(ready_segments)
    for d in range(exhausted):
        grp = batch["groups"][ready + mastered + d]
        grp.update(state="exhausted", task_id=f"task-x{d}", mu=0.0, rewards=[0.0] * g, successes=0)
    batch["stats"].update(mastered=mastered, exhausted=exhausted, ready=ready)
    wildawm_rl.validate_batch(batch)
    return batch


def real_rollouts(groups):
    return sum(len(group) for group in groups)


class SlimeContractTest(unittest.TestCase):
    """The plugin's output for batches that dropped tasks, held to slime's own checks."""

    def fitted(self, batch, policy, **over):
        args = slime_args(**over)
        mode = wildawm_slime.advantage_mode(args)
        groups = wildawm_slime.build_samples(batch, StandInSample, advantage_as_reward=(mode == "reward"))
        out, counts = wildawm_slime.fit_to_slime(groups, wildawm_rl.batch_g(batch), args.global_batch_size, policy,
                                                 StandInSample, advantage_as_reward=(mode == "reward"))
        return args, out, counts

    def check_loss(self, batch, got, counts, gbs):
        """Every trained rollout's tokens weigh advantage / (L_j * real rollouts of its slime step);
        with every ready group in one step that is wildawm's loss_weight * advantage; nulls weigh 0."""
        src = {(s["rollout_id"], s["segment_index"]): s for s in batch["samples"] or []}
        samples = got["samples"]
        step_real = {}
        for k, positions in enumerate(got["steps"]):
            real = {samples[p].rollout_id for p in positions if not samples[p].metadata.get(wildawm_slime.META_NULL)}
            for p in positions:
                step_real[p] = len(real)
        trained = set()
        for p, x in enumerate(samples):
            if x.metadata.get(wildawm_slime.META_NULL):
                self.assertEqual(got["coef"][p], 0.0)
                self.assertEqual(sum(x.loss_mask), 0)
                continue
            seg = src[(x.metadata[wildawm_slime.META_ROLLOUT], x.metadata["wildawm_segment_index"])]
            want = seg["advantage"] / (seg["trajectory_trainable_tokens"] * step_real[p])
            self.assertAlmostEqual(got["coef"][p], want, places=12)
            self.assertEqual(got["mask_sums"][p], seg["trajectory_trainable_tokens"], "L_j over all segments")
            trained.add(seg["rollout_id"])
            if len(got["steps"]) == 1 and counts["trimmed_groups"] == 0:
                self.assertAlmostEqual(got["coef"][p], seg["loss_weight"] * seg["advantage"], places=12)
        self.assertEqual(len(trained), counts["trained_rollouts"])
        self.assertEqual(got["dropped_rollouts"], 0, "slime drops no trailing rollout of the plugin's")

    def test_unfitted_output_fails_slimes_assertion(self):
        # The failure, reproduced: 24 rollouts of 8 tasks x G=4 against --global-batch-size 32.
        batch = contract_batch()
        groups = wildawm_slime.build_samples(batch, StandInSample)
        self.assertEqual(real_rollouts(groups), 24)
        with self.assertRaisesRegex(AssertionError, r"num_rollouts \(24\) < global_batch_size \(32\)"):
            SlimeContract(slime_args()).run(groups)
        with self.assertRaisesRegex(AssertionError, r"num_rollouts \(12\) < global_batch_size \(16\)"):
            SlimeContract(slime_args(global_batch_size=16)).run(groups[:3])

    def test_contract_rejects(self):
        # The re-implementation can fail: shared ids, an empty output, a short mask, top-p.
        groups = wildawm_slime.build_samples(contract_batch(), StandInSample)
        out, _ = wildawm_slime.fit_to_slime(groups, 4, 32, "pad", StandInSample)
        split = [[list(t) for t in g] for g in out]
        two = next(t for g in split for t in g if len(t) > 1)
        two[1] = StandInSample(**{**two[1].__dict__, "rollout_id": 999})
        with self.assertRaisesRegex(AssertionError, "must share rollout_id"):
            SlimeContract(slime_args()).run(split)
        with self.assertRaises(IndexError):
            SlimeContract(slime_args()).run([])
        out[0][0][0].loss_mask = out[0][0][0].loss_mask[:-1]
        with self.assertRaisesRegex(AssertionError, "loss mask length"):
            SlimeContract(slime_args()).run(out)
        groups = wildawm_slime.build_samples(contract_batch(), StandInSample)
        out, _ = wildawm_slime.fit_to_slime(groups, 4, 32, "pad", StandInSample)
        with self.assertRaises(AssertionError):
            SlimeContract(slime_args(rollout_top_p=0.9)).run(out)
        with self.assertRaisesRegex(AssertionError, "samples < dp_size"):
            SlimeContract(slime_args(global_batch_size=1), dp_size=2).run(
                wildawm_slime.fit_to_slime(wildawm_slime.build_samples(contract_batch(), StandInSample),
                                           4, 1, "drop", StandInSample)[0])

    def test_each_policy_on_dropped_tasks(self):
        # gbs: 32 (--num-steps-per-rollout 1, the recipe), 16 (2 steps), 8 (4 steps); dp 1 and 2.
        cases = {
            # policy, gbs: (trained rollouts, trimmed groups, null rollouts, slime steps)
            ("pad", 32): (24, 0, 8, 1), ("ready", 32): (24, 0, 8, 1), ("drop", 32): (0, 6, 32, 1),
            ("pad", 16): (24, 0, 8, 2), ("ready", 16): (24, 0, 8, 2), ("drop", 16): (16, 2, 0, 1),
            ("pad", 8): (24, 0, 0, 3), ("drop", 8): (24, 0, 0, 3),
        }
        for (policy, gbs), want in cases.items():
            for mode in ({}, {"custom_reward_post_process_path": None, "rewards_normalization": False}):
                for dp in (1, 2):
                    with self.subTest(policy=policy, gbs=gbs, mode=bool(mode), dp=dp):
                        batch = contract_batch()
                        args, out, counts = self.fitted(batch, policy, global_batch_size=gbs, **mode)
                        got = SlimeContract(args, dp_size=dp).run(out)
                        self.assertGreater(len(got["samples"]), counts["trained_rollouts"] + counts["null_rollouts"] - 1)
                        self.assertEqual((counts["trained_rollouts"], counts["trimmed_groups"], counts["null_rollouts"],
                                          counts["slime_steps"]), want)
                        self.assertEqual(len(got["steps"]), want[3])
                        self.assertEqual(counts["null_step"], int(want[0] == 0))
                        self.check_loss(batch, got, counts, gbs)

    def test_segments_make_more_samples_than_rollouts(self):
        batch = contract_batch()
        args, out, counts = self.fitted(batch, "pad")
        got = SlimeContract(args).run(out)
        real = [x for x in got["samples"] if not x.metadata.get(wildawm_slime.META_NULL)]
        self.assertEqual(len(real), len(batch["samples"]))
        self.assertGreater(len(real), 24)
        self.assertEqual(len(got["steps"][0]), len(got["samples"]), "one slime step holds every segment")

    def test_zero_ready_tasks(self):
        for policy in wildawm_slime.FILL_POLICIES:
            for gbs in (32, 8):
                with self.subTest(policy=policy, gbs=gbs):
                    batch = make_batch(g=4, segments=(), dropped=8)
                    args, out, counts = self.fitted(batch, policy, global_batch_size=gbs)
                    got = SlimeContract(args, dp_size=2).run(out)
                    self.assertEqual(counts["null_step"], 1)
                    self.assertEqual(len(got["samples"]), gbs)
                    self.assertEqual(got["coef"], [0.0] * gbs, "a null step trains nothing")
                    self.assertTrue(all(x.remove_sample for x in got["samples"]))

    def test_batches_of_the_service(self):
        # Real batches of `wildawm rl serve`'s code (trainer.Service), saved by
        # issue 32's learning check: `wildawm rl learn --policy learned:observe
        # --steps 8 --tasks 8 --g 4 --fake-browser --seed 2` on a 640-task
        # world run's rl split; the request's policy_params (the policy's
        # weights) stripped. Step 4: 2 ready groups, 6 exhausted, 192 samples
        # of 8 rollouts; step 5: 1 ready, 7 exhausted, 96 samples of 4
        # rollouts; step 1: no ready task ("samples": null, "tokens": false).
        seen = {}
        for name in sorted(os.listdir(os.path.join(HERE, "testdata"))):
            with gzip.open(os.path.join(HERE, "testdata", name)) as f:
                batch = json.load(f)
            wildawm_rl.validate_batch(batch)
            seen[batch["step"]] = batch["stats"]["ready"]
            rollouts = len({x["rollout_id"] for x in batch["samples"] or []})
            self.assertLess(rollouts, 8 * 4, "tasks were dropped")
            if rollouts:
                self.assertGreater(len(batch["samples"]), rollouts, "segments: more samples than rollouts")
            for policy in wildawm_slime.FILL_POLICIES:
                for gbs in (32, 16, 4):
                    for dp in (1, 2):
                        with self.subTest(batch=name, policy=policy, gbs=gbs, dp=dp):
                            args, out, counts = self.fitted(batch, policy, global_batch_size=gbs)
                            got = SlimeContract(args, dp_size=dp).run(out)
                            self.check_loss(batch, got, counts, gbs)
                            self.assertEqual(counts["null_step"], int(counts["trained_rollouts"] == 0))
                            if policy != "drop":
                                self.assertEqual(counts["trained_rollouts"], rollouts, "pad and ready train every rollout")
        self.assertEqual(seen, {1: 0, 4: 2, 5: 1})

    def test_a_batch_from_the_service(self):
        # WILDAWM_SLIME_BATCH names a batch JSON a real `wildawm rl serve` returned
        # (e.g. saved with wildawm_rl.Client.request_batch); held to the same contract.
        path = os.environ.get("WILDAWM_SLIME_BATCH")
        if not path:
            self.skipTest("WILDAWM_SLIME_BATCH is unset: give a batch JSON of `wildawm rl serve` to check it")
        with open(path) as f:
            batch = json.load(f)
        g = wildawm_rl.batch_g(batch)
        for policy in wildawm_slime.FILL_POLICIES:
            for gbs in (g * int(batch["request"]["tasks"]), g):
                with self.subTest(policy=policy, gbs=gbs):
                    args, out, counts = self.fitted(batch, policy, global_batch_size=gbs)
                    self.check_loss(batch, SlimeContract(args).run(out), counts, gbs)


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
    def serve(self, batch, token=None, outages=0):
        """A fake service: batch (or batch(request)) for every POST, after `outages` 503s."""
        posts = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                code, body = 200, batch(posts[-1]) if callable(batch) else batch
                if token is not None and self.headers.get("Authorization") != "Bearer " + token:
                    code, body = 401, {"error": "missing or wrong bearer token"}
                extra = {}
                if len(posts) <= outages:
                    code, body = 503, {"error": "engine unreachable: ask again after Retry-After", "retriable": True}
                    extra = {"Retry-After": "0"}
                raw = json.dumps(body).encode()
                self.send_response(code)
                for k, v in extra.items():
                    self.send_header(k, v)
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
            out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url, rollout_batch_size=3, global_batch_size=8),
                                                 2, None)
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
                out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url, wildawm_token_file=path, rollout_batch_size=3,
                                                                global_batch_size=8), 2, None)
            self.assertEqual(len(out.samples), 2)
            os.environ["WILDAWM_TOKEN_FILE"] = path
            with StandInSlime():
                out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url, rollout_batch_size=3, global_batch_size=8),
                                                     2, None)
            self.assertEqual(len(out.samples), 2)

    def test_a_step_without_ready_tasks_is_a_null_step(self):
        batch = make_batch(g=4, segments=(), dropped=3)
        url, posts = self.serve(batch)
        with StandInSlime():
            out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url), 0, None)
        self.assertEqual(posts[0]["fill"], "ready")
        self.assertEqual(out.metrics["rollout/wildawm/null_step"], 1)
        self.assertEqual(out.metrics["rollout/wildawm/null_rollouts"], 32)
        SlimeContract(slime_args()).run(out)
        # The service's own zero-ready batch: "samples": null, "tokens": false.
        with gzip.open(os.path.join(HERE, "testdata", "service-step-000001.json.gz")) as f:
            real = json.load(f)
        url, _ = self.serve(real)
        with StandInSlime(), self.assertLogs("wildawm_slime", "WARNING") as logs:
            out = wildawm_slime.generate_rollout(slime_args(wildawm_url=url), 0, None)
        self.assertIn("no ready task", logs.output[0])
        self.assertEqual(out.metrics["rollout/wildawm/null_step"], 1)
        self.assertEqual(out.metrics["rollout/wildawm/exhausted"], 8)
        SlimeContract(slime_args()).run(out)

    def test_fill_ready_through_the_service(self):
        # The service honours fill: "ready" samples two more tasks (stats.filled), "drop" returns the 6 ready.
        def answer(req):
            if req.get("fill") == "ready":
                b = contract_batch(ready_segments=((1, 2), (3, 1), (1,), (2,), (1, 1, 2), (1,), (2, 1), (1,)))
                b["stats"]["filled"] = 2
                return b
            return contract_batch()

        url, posts = self.serve(answer)
        for policy, want_null, want_trained in (("ready", 0, 32), ("pad", 8, 24), ("drop", 32, 0)):
            with self.subTest(policy), StandInSlime():
                args = slime_args(wildawm_url=url, wildawm_fill=policy)
                out = wildawm_slime.generate_rollout(args, 0, None)
                got = SlimeContract(args).run(out)
                self.assertEqual(out.metrics["rollout/wildawm/null_rollouts"], want_null)
                self.assertEqual(out.metrics["rollout/wildawm/trained_rollouts"], want_trained)
                self.assertEqual(len(got["steps"]), 1)
                self.assertEqual(posts[-1]["fill"], "ready" if policy == "ready" else "drop")
        self.assertEqual(posts[0].get("fill"), "ready")
        with StandInSlime(), self.assertLogs("wildawm_slime", "WARNING") as logs:
            wildawm_slime.generate_rollout(slime_args(wildawm_url=url, wildawm_fill="drop"), 0, None)
        self.assertIn("kept none of its 6 ready groups", logs.output[0])

    def test_an_engine_outage_is_waited_out(self):
        url, posts = self.serve(contract_batch(), outages=2)
        with StandInSlime():
            args = slime_args(wildawm_url=url, wildawm_fill="pad")
            out = wildawm_slime.generate_rollout(args, 4, None)
        SlimeContract(args).run(out)
        self.assertEqual(len(posts), 3)
        self.assertEqual(out.metrics["rollout/wildawm/client_retries"], 2)
        self.assertTrue(all(p == posts[0] for p in posts), "the same request each time")

    def test_refusals_come_before_any_request(self):
        url, posts = self.serve(make_batch(g=4, segments=((1,),)))
        for over, want in ((dict(rollout_top_p=0.9), "rollout-top-p"), (dict(wildawm_fill="x"), "wildawm_fill"),
                           (dict(global_batch_size=None), "global-batch-size"),
                           (dict(use_dynamic_batch_size=False), "use-dynamic-batch-size"),
                           (dict(sglang_tool_call_parser=None), "--sglang-tool-call-parser is unset")):
            with self.subTest(over), StandInSlime(), self.assertRaisesRegex(wildawm_slime.ConfigError, want):
                wildawm_slime.generate_rollout(slime_args(wildawm_url=url, **over), 0, None)
        self.assertEqual(posts, [], "no request before the flags are right")

    def test_evaluation_is_refused(self):
        with self.assertRaisesRegex(NotImplementedError, "wildawm eval"):
            wildawm_slime.generate_rollout(slime_args(), 0, None, evaluation=True)

    def test_imports_without_slime(self):
        # This module imported wildawm_slime with no slime anywhere; the stand-ins come and go.
        self.assertNotIn("slime", sys.modules)


if __name__ == "__main__":
    unittest.main()
