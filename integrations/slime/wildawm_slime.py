"""A slime plugin that trains on wildawm worlds: its rollouts come from `wildawm rl serve`.

slime (THUDM/slime) calls a custom rollout function once per train step
(`--rollout-function-path wildawm_slime.generate_rollout`). This one asks the
wildawm rollout service for the step's batch, with slime's own SGLang router
as the inference engine the wildawm harness calls, and hands slime one Sample
per segment: wildawm has already run the adaptive scheduler (kappa, chunks,
mastered / ready / exhausted), verified every rollout, chosen the G-subset
and computed the advantage over the whole pool of K, so slime only trains.

The advantage reaches slime's GRPO unchanged through slime's reward
post-process hook (`--custom-reward-post-process-path
wildawm_slime.post_process_rewards`): the hook returns wildawm's advantage as
the "normalised reward" that slime's GRPO broadcasts to every token. See
README.md for the whole command line and the slime source each hook mirrors.

slime is imported only inside generate_rollout, so this module (and its
pure Sample building, build_samples) imports and tests without slime.
"""

import os
import sys

try:
    import wildawm_rl
except ImportError:  # run from the repository: integrations/python beside integrations/slime
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import wildawm_rl

POST_PROCESS_PATH = "wildawm_slime.post_process_rewards"
"""The value of --custom-reward-post-process-path that hands slime wildawm's advantages."""

# Keys of Sample.metadata this plugin writes.
META_ROLLOUT = "wildawm_rollout_id"  # the service's rollout id (a string), shared by a trajectory's segments
META_ADVANTAGE = "wildawm_advantage"
META_RAW_REWARD = "raw_reward"  # slime's BatchBuilder.convert logs this instead of Sample.reward when present


class ConfigError(ValueError):
    """slime's arguments do not give wildawm's recipe; the message names the flag to set."""


def setting(args, name, env, default=None):
    """A plugin setting: args.<name> (from slime's --custom-config-path YAML), else $<env>, else default."""
    value = getattr(args, name, None)
    if value is None or value == "":
        value = os.environ.get(env, "")
    return value if value != "" else default


def engine_spec(args):
    """The engine the wildawm harness calls: slime's SGLang router, as wildawm's engine spec.

    slime's own generate (slime/rollout/sglang_rollout.py, generate and
    get_model_url) posts to http://{args.sglang_router_ip}:{args.sglang_router_port};
    the router serves SGLang's OpenAI-compatible API under /v1 as well.
    """
    ip = getattr(args, "sglang_router_ip", None)
    port = getattr(args, "sglang_router_port", None)
    if not ip or not port:
        raise ConfigError("args.sglang_router_ip/sglang_router_port are unset: slime sets them when it starts "
                          "its SGLang router (or give --sglang-router-ip and --sglang-router-port)")
    model = setting(args, "wildawm_model", "WILDAWM_MODEL")
    if not model:
        hf = getattr(args, "hf_checkpoint", None) or ""
        model = os.path.basename(os.path.normpath(hf)) if hf else ""
    if not model:
        raise ConfigError("no model name for the engine: set wildawm_model in --custom-config-path or $WILDAWM_MODEL")
    return f"sglang+http://{ip}:{port}/v1#{model}"


def advantage_mode(args):
    """How the advantage reaches slime's GRPO: "hook" or "reward".

    "hook": --custom-reward-post-process-path wildawm_slime.post_process_rewards;
    Sample.reward is wildawm's reward r_j and the hook returns the advantage.
    "reward": --disable-rewards-normalization without the hook; Sample.reward
    is the advantage itself, which slime's GRPO then uses as it is.
    Anything else would let slime renormalise the rewards per "group" of
    n_samples_per_prompt samples, which segments (several samples per
    rollout) and wildawm's pool of K (larger than G) both break.
    """
    estimator = getattr(args, "advantage_estimator", "grpo")
    if estimator not in ("grpo", "gspo"):
        raise ConfigError(f"--advantage-estimator {estimator}: use grpo: wildawm's advantage is a per-rollout scalar "
                          "that slime's GRPO broadcasts to every token (get_grpo_returns)")
    if getattr(args, "normalize_advantages", False):
        raise ConfigError("--normalize-advantages whitens the advantages across the batch: leave it out, "
                          "wildawm's advantages are already normalised over each task's pool")
    hook = getattr(args, "custom_reward_post_process_path", None)
    if hook:
        if hook.rsplit(".", 1)[-1] != "post_process_rewards" or "wildawm_slime" not in hook:
            raise ConfigError(f"--custom-reward-post-process-path {hook}: it must be {POST_PROCESS_PATH} "
                              "so slime trains on wildawm's advantages")
        return "hook"
    if getattr(args, "rewards_normalization", True):
        raise ConfigError(f"slime would renormalise the rewards: give --custom-reward-post-process-path "
                          f"{POST_PROCESS_PATH} (or --disable-rewards-normalization)")
    return "reward"


def batch_request(args, rollout_id):
    """The keyword arguments of wildawm_rl.Client.request_batch for slime's train step rollout_id.

    slime counts rollout ids from 0 (--start-rollout-id on resume), wildawm's
    train steps from 1: step = rollout_id + 1, so a resumed slime run asks
    for the same steps and the service answers the batches it already has.
    """
    sampling = {}
    temperature = getattr(args, "rollout_temperature", None)
    if temperature is not None:
        sampling["temperature"] = float(temperature)
    top_p = getattr(args, "rollout_top_p", None)
    if top_p is not None:
        sampling["top_p"] = float(top_p)
    max_tokens = getattr(args, "rollout_max_response_len", None)
    if max_tokens:
        sampling["max_tokens"] = int(max_tokens)
    context = setting(args, "wildawm_context_tokens", "WILDAWM_CONTEXT_TOKENS")
    if context:
        sampling["context_tokens"] = int(context)
    turns = setting(args, "wildawm_max_turns", "WILDAWM_MAX_TURNS")
    if turns:
        sampling["max_turns"] = int(turns)
    seed = getattr(args, "rollout_seed", None)
    if seed is not None:
        sampling["seed"] = int(seed)
    request = {
        "step": int(rollout_id) + 1,
        "tasks": int(args.rollout_batch_size),
        "g": int(args.n_samples_per_prompt),
        "engine": engine_spec(args),
        "sampling": sampling,
        "policy_version": str(rollout_id),
    }
    harness = setting(args, "wildawm_harness", "WILDAWM_HARNESS")
    if harness:
        request["harness"] = harness
    step_seed = setting(args, "wildawm_seed", "WILDAWM_SEED")
    if step_seed:
        request["seed"] = int(step_seed)
    return request


def build_samples(batch, sample_cls, advantage_as_reward=False):
    """slime Samples from a wildawm batch: groups (ready tasks) of trajectories of segments.

    The nesting is the "compact" shape slime's RolloutManager accepts
    (slime/ray/rollout.py, _validate_rollout_id_annotated):
    list[list[list[Sample]]], prompt x rollout x samples of one rollout, every
    sibling sharing Sample.rollout_id, so slime's BatchBuilder.convert
    (slime/rollout/batch_builder.py) sums a rollout's loss masks over all its
    segments (rollout_mask_sums) and the loss is token-mean within a rollout,
    as wildawm's L_j. Sample fields follow slime/utils/types.py Sample:
    tokens = prompt + response ids, response_length, loss_mask,
    rollout_log_probs (one per response token), weight_versions, status.

    sample_cls is slime.utils.types.Sample (or a stand-in with the same
    fields and a Status enum). With advantage_as_reward the reward is the
    advantage (the "reward" mode of advantage_mode), else wildawm's reward.
    """
    if not batch.get("tokens"):
        raise ValueError(f"batch {batch.get('id')}: it carries no token ids (an offline scripted policy ran): "
                         "nothing to train on; point the service at the trainer's engine")
    wildawm_rl.validate_batch(batch)
    status = sample_cls.Status
    groups = []
    index = 0
    rollout_number = 0
    for gi, group in enumerate(wildawm_rl.group_samples(batch)):
        trajectories = []
        for trajectory in group:
            segments = []
            for seg in trajectory:
                prompt = list(seg["prompt_token_ids"])
                response = list(seg["response_token_ids"])
                s = sample_cls()
                s.group_index = gi
                s.index = index
                index += 1
                # Sample.rollout_id groups one rollout's samples for the loss reducer
                # (an int in slime); the service's id stays in the metadata.
                s.rollout_id = rollout_number
                s.prompt = ""
                s.tokens = prompt + response
                s.response = ""
                s.response_length = len(response)
                s.loss_mask = list(seg["loss_mask"])
                s.rollout_log_probs = [float(x) for x in seg["rollout_logprobs"]]
                s.weight_versions = list(seg.get("weight_versions") or [])
                s.reward = float(seg["advantage"] if advantage_as_reward else seg["reward"])
                truncated = seg.get("finish_reason") == "length" or seg.get("status") == "budget"
                s.status = status.TRUNCATED if truncated else status.COMPLETED
                s.metadata = {
                    META_ROLLOUT: seg["rollout_id"],
                    META_ADVANTAGE: float(seg["advantage"]),
                    META_RAW_REWARD: float(seg["reward"]),
                    "wildawm_step": seg.get("step"),
                    "wildawm_task_id": seg["task_id"],
                    "wildawm_trajectory_index": seg["trajectory_index"],
                    "wildawm_segment_index": seg["segment_index"],
                    "wildawm_segment_count": seg["segment_count"],
                    "wildawm_trajectory_trainable_tokens": seg["trajectory_trainable_tokens"],
                    "wildawm_loss_weight": seg["loss_weight"],
                    "wildawm_format_failure": bool(seg.get("format_failure")),
                    "wildawm_v": bool(seg.get("v")),
                    "wildawm_status": seg.get("status"),
                    "wildawm_finish_reason": seg.get("finish_reason"),
                    "wildawm_k": seg.get("k"),
                    "wildawm_mu": seg.get("mu"),
                    "wildawm_sigma": seg.get("sigma"),
                    "wildawm_kappa": seg.get("kappa"),
                }
                segments.append(s)
            rollout_number += 1
            trajectories.append(segments)
        groups.append(trajectories)
    return groups


def post_process_rewards(args, samples):
    """slime's reward post-process hook: (raw rewards, wildawm's advantages).

    Replaces the GRPO group normalisation of slime's
    BatchBuilder._post_process_rewards (slime/rollout/batch_builder.py;
    RolloutManager._post_process_rewards in slime/ray/rollout.py before it),
    which slime calls on the flattened samples when
    --custom-reward-post-process-path is set. The second list is what slime
    stores as train_data["rewards"]; with --advantage-estimator grpo,
    compute_advantages_and_returns (slime/backends/megatron_utils/loss.py)
    makes every response token's advantage that value (get_grpo_returns in
    slime/utils/ppo_utils.py): the rollout's advantage over wildawm's whole
    pool, on every segment.
    """
    raw, advantages = [], []
    for i, s in enumerate(samples):
        meta = getattr(s, "metadata", None) or {}
        if META_ADVANTAGE not in meta:
            raise ValueError(f"sample {i} has no {META_ADVANTAGE} in its metadata: "
                             f"{POST_PROCESS_PATH} only post-processes wildawm_slime.generate_rollout's samples")
        raw.append(float(meta.get(META_RAW_REWARD, s.reward)))
        advantages.append(float(meta[META_ADVANTAGE]))
    return raw, advantages


def batch_metrics(batch):
    """What the step did, for slime's rollout metrics."""
    stats = batch.get("stats") or {}
    metrics = {f"rollout/wildawm/{k}": stats[k] for k in
               ("rollouts", "cancelled", "retried", "succeeded", "ready", "mastered", "exhausted", "abandoned",
                "wall_ms", "scheduler_ms") if isinstance(stats.get(k), (int, float))}
    groups = batch.get("groups") or []
    if groups:
        metrics["rollout/wildawm/kappa_mean"] = sum(g.get("kappa", 0) for g in groups) / len(groups)
    return metrics


def generate_rollout(args, rollout_id, data_source=None, evaluation=False):
    """slime's custom rollout function (--rollout-function-path wildawm_slime.generate_rollout).

    Mirrors the signature and return value of slime's default,
    slime/rollout/sglang_rollout.py generate_rollout(args, rollout_id,
    data_source, evaluation) -> RolloutFnTrainOutput
    (slime/rollout/base_types.py). data_source is not read: wildawm samples
    the step's tasks from its RL split itself (run slime with
    --disable-rollout-global-dataset). slime's --dynamic-sampling-filter-path
    and --over-sampling-batch-size belong to slime's own generate_rollout and
    do not apply: wildawm's adaptive rollouts already drop mastered and
    exhausted tasks, so a step may hold fewer than --rollout-batch-size groups.
    """
    if evaluation:
        raise NotImplementedError("wildawm_slime does not evaluate inside slime: leave --eval-interval out and "
                                  "run `wildawm eval --split val` against the checkpoint's engine")
    from slime.rollout.base_types import RolloutFnTrainOutput
    from slime.utils.types import Sample

    mode = advantage_mode(args)
    url = setting(args, "wildawm_url", "WILDAWM_URL")
    if not url:
        raise ConfigError("no rollout service: set wildawm_url in --custom-config-path or $WILDAWM_URL "
                          "(the address `wildawm rl serve --addr` listens on)")
    timeout = float(setting(args, "wildawm_timeout", "WILDAWM_TIMEOUT", 60))
    # The bearer token of a service started with --token-file: the file's
    # line (wildawm_token_file or $WILDAWM_TOKEN_FILE), or $WILDAWM_TOKEN.
    token_file = setting(args, "wildawm_token_file", "WILDAWM_TOKEN_FILE")
    client = wildawm_rl.Client(url, timeout=timeout, token_file=token_file)
    request = batch_request(args, rollout_id)
    batch = client.request_batch(**request)
    samples = build_samples(batch, Sample, advantage_as_reward=(mode == "reward"))
    if not samples:
        raise RuntimeError(f"wildawm step {request['step']}: no ready task (mastered {batch['stats'].get('mastered')}, "
                           f"exhausted {batch['stats'].get('exhausted')}, abandoned {batch['stats'].get('abandoned')}): "
                           "nothing to train on; raise --rollout-batch-size so a step samples more tasks")
    return RolloutFnTrainOutput(samples=samples, metrics=batch_metrics(batch))
