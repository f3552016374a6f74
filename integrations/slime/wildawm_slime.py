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

slime counts a train step in rollouts (slime/utils/dp_schedule.py
build_dp_schedule: num_steps = rollouts // global_batch_size, asserted >= 1,
trailing rollouts dropped), so a step that dropped tasks would end the run.
fit_to_slime makes every step's rollout count a positive multiple of
--global-batch-size by the trainer's wildawm_fill policy (FILL_POLICIES):
ask the service to fill, pad with null rollouts that train nothing, or trim
whole groups. README.md says which slime source each rule follows.

slime is imported only inside generate_rollout, so this module (and its
pure Sample building, build_samples and fit_to_slime) imports and tests
without slime.
"""

import logging
import os
import sys

try:
    import wildawm_rl
except ImportError:  # run from the repository: integrations/python beside integrations/slime
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import wildawm_rl

logger = logging.getLogger(__name__)

POST_PROCESS_PATH = "wildawm_slime.post_process_rewards"
"""The value of --custom-reward-post-process-path that hands slime wildawm's advantages."""

# Keys of Sample.metadata this plugin writes.
META_ROLLOUT = "wildawm_rollout_id"  # the service's rollout id (a string), shared by a trajectory's segments
META_ADVANTAGE = "wildawm_advantage"
META_RAW_REWARD = "raw_reward"  # RolloutManager._convert_samples_to_train_data logs this instead of Sample.reward
META_LOSS_SCALE = "wildawm_loss_scale"  # the factor the advantage is trained with (fit_to_slime)
META_NULL = "wildawm_null"  # a null rollout: padding that trains nothing

FILL_POLICIES = ("ready", "pad", "drop")
"""The values of the wildawm_fill setting: what a step does with fewer ready rollouts than slime's unit.

"ready" (the default): ask the service with fill=ready, which samples further
tasks of the split until --rollout-batch-size groups are ready; if the split
runs out first, pad as "pad" does.
"pad": ask with fill=drop (the paper's step: the ready groups of the tasks
sampled) and pad to the next multiple of --global-batch-size with null
rollouts; each slime step's real rollouts are scaled so that its loss is the
mean over its real rollouts, wildawm's loss_weight 1/(L_j*G*ready).
"drop": ask with fill=drop and keep the largest number of whole ready groups
whose rollouts are a multiple of --global-batch-size; the rest is not
trained. With none left the step is a null step.
"""

PAPER_CONTEXT_TOKENS = 102400
"""The harness's context before compaction the paper trains with (wildawm_context_tokens' default)."""

PAPER_MAX_TURNS = 256
"""The paper's turns per rollout (wildawm_max_turns' default)."""

DEFAULT_RETRIES = 120
"""The client's retries in a row for the plugin: with backoff up to a minute, about two hours of outage."""


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


def check_top_p(args):
    """--rollout-top-p as a float, refused unless 1.0.

    With --rollout-top-p != 1.0 slime wants each sample's nucleus:
    RolloutManager._convert_samples_to_train_data (slime/ray/rollout.py)
    asserts every sample has rollout_top_p_token_ids and
    rollout_top_p_token_offsets (response_length + 1 offsets, the last equal
    to the ids' length), and get_rollout_top_p_logprob_kwargs
    (slime/backends/megatron_utils/loss.py) raises without them: slime's own
    rollout asks SGLang for them (custom_params return_top_p_token_ids in
    slime/rollout/sglang_rollout.py GenerateState). wildawm's batches carry no
    nucleus sets, so a top-p below 1 would fail at slime's assertion after a
    whole step of rollouts; it is refused before any request.
    """
    top_p = getattr(args, "rollout_top_p", None)
    if top_p is None:
        return None
    top_p = float(top_p)
    if top_p != 1.0:
        raise ConfigError(f"--rollout-top-p {top_p}: use --rollout-top-p 1.0: slime then wants every sample's "
                          "top-p token sets (rollout_top_p_token_ids/offsets, asserted in "
                          "RolloutManager._convert_samples_to_train_data), which wildawm's batches do not carry")
    return top_p


def check_tool_parser(args):
    """Refuse an SGLang started without a tool-call parser.

    slime forwards every SGLang ServerArgs field as --sglang-<flag>
    (add_sglang_arguments in slime/backends/sglang_utils/arguments.py) into
    args.sglang_<field>, and _compute_server_args
    (slime/backends/sglang_utils/sglang_engine.py) hands them to SGLang.
    Without tool_call_parser SGLang's chat completions return the model's
    tool calls as text: every wildawm turn would be a format failure.
    An args without the attribute (no SGLang arguments parsed) is not checked.
    """
    if not hasattr(args, "sglang_tool_call_parser"):
        return None
    parser = getattr(args, "sglang_tool_call_parser", None)
    if not parser:
        raise ConfigError("--sglang-tool-call-parser is unset: SGLang then returns tool calls as text and every "
                          "wildawm turn is a format failure; give the model's parser (qwen for Qwen3, qwen3_coder "
                          "for Qwen3-Coder; README.md says how to pick one)")
    return parser


def fill_policy(args):
    """The wildawm_fill setting (or $WILDAWM_FILL): one of FILL_POLICIES, default "ready"."""
    policy = setting(args, "wildawm_fill", "WILDAWM_FILL", "ready")
    if policy not in FILL_POLICIES:
        raise ConfigError(f"wildawm_fill {policy!r}: give \"ready\" (the service samples more tasks), \"pad\" "
                          "(null rollouts up to --global-batch-size) or \"drop\" (whole groups, a multiple of "
                          "--global-batch-size)")
    return policy


def slime_unit(args):
    """slime's --global-batch-size: the rollouts (not samples) of one slime training step.

    slime/utils/arguments.py sets it to rollout_batch_size * n_samples_per_prompt
    // num_steps_per_rollout; slime/utils/dp_schedule.py build_dp_schedule
    splits a rollout's output into len(rollout ids) // global_batch_size steps
    (asserted >= 1) by Sample.rollout_id and drops the trailing rollouts.
    """
    gbs = getattr(args, "global_batch_size", None)
    if not gbs or int(gbs) < 1:
        raise ConfigError("args.global_batch_size is unset: give --global-batch-size (or --num-steps-per-rollout) "
                          "so the plugin can fit each step to slime's training steps")
    if not getattr(args, "use_dynamic_batch_size", False):
        raise ConfigError("give --use-dynamic-batch-size (with --max-tokens-per-gpu): segments make a step's sample "
                          "count vary, which slime's static micro-batches refuse (build_dp_schedule asserts their "
                          "count is a multiple of the data-parallel size)")
    return int(gbs)


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
    top_p = check_top_p(args)
    if top_p is not None:
        sampling["top_p"] = top_p
    max_tokens = getattr(args, "rollout_max_response_len", None)
    if max_tokens:
        sampling["max_tokens"] = int(max_tokens)
    # The paper's budgets unless the trainer gives smaller ones.
    sampling["context_tokens"] = int(setting(args, "wildawm_context_tokens", "WILDAWM_CONTEXT_TOKENS",
                                             PAPER_CONTEXT_TOKENS))
    sampling["max_turns"] = int(setting(args, "wildawm_max_turns", "WILDAWM_MAX_TURNS", PAPER_MAX_TURNS))
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
        "fill": "ready" if fill_policy(args) == "ready" else "drop",
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
    sibling sharing Sample.rollout_id, so slime's
    RolloutManager._convert_samples_to_train_data (slime/ray/rollout.py) sums
    a rollout's loss masks over all its segments (rollout_mask_sums) and the
    loss is token-mean within a rollout (get_sum_of_sample_mean in
    slime/backends/megatron_utils/cp_utils.py), as wildawm's L_j. Sample fields follow slime/utils/types.py Sample:
    tokens = prompt + response ids, response_length, loss_mask,
    rollout_log_probs (one per response token), weight_versions, status.

    sample_cls is slime.utils.types.Sample (or a stand-in with the same
    fields and a Status enum). With advantage_as_reward the reward is the
    advantage (the "reward" mode of advantage_mode), else wildawm's reward.
    """
    if not batch.get("samples"):
        # No ready group: the service sends no samples (and "tokens": false,
        # there being no token to carry); fit_to_slime makes it a null step.
        wildawm_rl.validate_batch(batch)
        return []
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
                    META_LOSS_SCALE: 1.0,
                }
                segments.append(s)
            rollout_number += 1
            trajectories.append(segments)
        groups.append(trajectories)
    return groups


def post_process_rewards(args, samples):
    """slime's reward post-process hook: (raw rewards, wildawm's advantages).

    Replaces the GRPO group normalisation of slime's
    RolloutManager._post_process_rewards (slime/ray/rollout.py), which calls
    this hook on the flattened samples when --custom-reward-post-process-path
    is set. The advantage is multiplied by the sample's loss scale
    (metadata["wildawm_loss_scale"], set by fit_to_slime: 1 but in a slime
    step padded with null rollouts), which scales the PPO loss of its tokens
    by the same factor. The second list is what slime
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
        advantages.append(float(meta[META_ADVANTAGE]) * float(meta.get(META_LOSS_SCALE, 1.0)))
    return raw, advantages


def null_rollout(sample_cls, rollout_id, index, group_index, pad_token_id=0):
    """A rollout that trains nothing: one sample of a one-token prompt and a one-token response, loss mask [0].

    Sample.remove_sample makes RolloutManager._convert_samples_to_train_data
    zero its loss mask as well; get_sum_of_sample_mean divides by
    clamp_min(rollout_mask_sums, 1), so its loss is exactly 0 and it adds
    nothing to any gradient. It still counts as one of slime's rollouts.
    """
    s = sample_cls()
    s.group_index = group_index
    s.index = index
    s.rollout_id = rollout_id
    s.prompt = ""
    s.tokens = [int(pad_token_id), int(pad_token_id)]
    s.response = ""
    s.response_length = 1
    s.loss_mask = [0]
    s.rollout_log_probs = [0.0]
    s.weight_versions = []
    s.reward = 0.0
    s.remove_sample = True
    s.status = sample_cls.Status.COMPLETED
    s.metadata = {META_NULL: True, META_ADVANTAGE: 0.0, META_RAW_REWARD: 0.0, META_LOSS_SCALE: 0.0}
    return [s]


def fit_to_slime(groups, g, global_batch_size, policy, sample_cls, advantage_as_reward=False, pad_token_id=0):
    """(groups, counts): build_samples' groups fitted to slime's steps of global_batch_size rollouts.

    slime splits the output into rollouts // global_batch_size training steps
    and needs at least one (dp_schedule.py build_dp_schedule). policy is one
    of FILL_POLICIES ("ready" pads as "pad" does: its filling happened in the
    service). The result always holds a positive multiple of
    global_batch_size rollouts, whole groups first:

    - "drop": the largest number n of whole groups with n*G a multiple of
      global_batch_size; the other groups are dropped (counted as trimmed).
    - "pad"/"ready": every group, then null rollouts up to the next multiple.
      slime divides each step's loss by global_batch_size
      (loss_function in slime/backends/megatron_utils/loss.py), so each real
      rollout in a step with r real rollouts gets loss scale
      global_batch_size / r: the step's loss is then the mean over its real
      rollouts, as wildawm's loss_weight.
    - no rollout left: global_batch_size null rollouts, a null step.
    """
    if policy not in FILL_POLICIES:
        raise ConfigError(f"wildawm_fill {policy!r}: give one of {', '.join(FILL_POLICIES)}")
    gbs = int(global_batch_size)
    real = [traj for group in groups for traj in group]
    counts = {"ready_groups": len(groups), "ready_rollouts": len(real), "trimmed_groups": 0,
              "null_rollouts": 0, "null_step": 0}
    kept = list(groups)
    if policy == "drop":
        n = len(groups)
        while n > 0 and (n * g) % gbs:
            n -= 1
        counts["trimmed_groups"] = len(groups) - n
        kept = groups[:n]
    rollouts = sum(len(group) for group in kept)
    total = max(gbs, -(-rollouts // gbs) * gbs)
    nulls = total - rollouts
    out = [list(group) for group in kept]
    flat = [traj for group in out for traj in group]
    # The scale of each real rollout: gbs / real rollouts in its slime step
    # (steps are consecutive runs of gbs rollouts, in this order).
    for start in range(0, len(flat), gbs):
        chunk = flat[start:start + gbs]
        scale = gbs / len(chunk)
        for traj in chunk:
            for s in traj:
                s.metadata[META_LOSS_SCALE] = scale
                if advantage_as_reward:
                    s.reward = float(s.metadata[META_ADVANTAGE]) * scale
    if nulls:
        next_id = 1 + max((s.rollout_id for traj in flat for s in traj), default=-1)
        next_index = 1 + max((s.index for traj in flat for s in traj), default=-1)
        null_group = []
        gi = len(out)
        for k in range(nulls):
            null_group.append(null_rollout(sample_cls, next_id + k, next_index + k, gi, pad_token_id))
            if len(null_group) == g or k == nulls - 1:
                out.append(null_group)
                null_group = []
                gi += 1
    counts["null_rollouts"] = nulls
    counts["null_step"] = int(rollouts == 0)
    counts["trained_rollouts"] = rollouts
    counts["slime_steps"] = total // gbs
    counts["loss_scale_max"] = max((s.metadata[META_LOSS_SCALE] for traj in flat for s in traj), default=0.0)
    return out, counts


def batch_metrics(batch):
    """What the step did, for slime's rollout metrics."""
    stats = batch.get("stats") or {}
    metrics = {f"rollout/wildawm/{k}": stats[k] for k in
               ("rollouts", "cancelled", "retried", "succeeded", "ready", "mastered", "exhausted", "abandoned",
                "filled", "reused", "outages", "prefix_breaks", "staleness", "wall_ms", "scheduler_ms")
               if isinstance(stats.get(k), (int, float)) and not isinstance(stats.get(k), bool)}
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
    exhausted tasks, so a step may hold fewer than --rollout-batch-size
    groups; fit_to_slime then fits it to slime's steps by wildawm_fill, and a
    step with no ready task is a null step (null rollouts), never an error.
    The client retries through engine outages (503) and service restarts
    (wildawm_retries, wildawm_backoff, wildawm_deadline).
    """
    if evaluation:
        raise NotImplementedError("wildawm_slime does not evaluate inside slime: leave --eval-interval out and "
                                  "run `wildawm eval --split val` against the checkpoint's engine")
    from slime.rollout.base_types import RolloutFnTrainOutput
    from slime.utils.types import Sample

    # Every refusal comes before the first request: a step's rollouts are dear.
    mode = advantage_mode(args)
    policy = fill_policy(args)
    gbs = slime_unit(args)
    check_tool_parser(args)
    url = setting(args, "wildawm_url", "WILDAWM_URL")
    if not url:
        raise ConfigError("no rollout service: set wildawm_url in --custom-config-path or $WILDAWM_URL "
                          "(the address `wildawm rl serve --addr` listens on)")
    request = batch_request(args, rollout_id)
    timeout = float(setting(args, "wildawm_timeout", "WILDAWM_TIMEOUT", 60))
    retries = int(setting(args, "wildawm_retries", "WILDAWM_RETRIES", DEFAULT_RETRIES))
    backoff = float(setting(args, "wildawm_backoff", "WILDAWM_BACKOFF", wildawm_rl.DEFAULT_BACKOFF))
    deadline = setting(args, "wildawm_deadline", "WILDAWM_DEADLINE")
    # The bearer token of a service started with --token-file: the file's
    # line (wildawm_token_file or $WILDAWM_TOKEN_FILE), or $WILDAWM_TOKEN.
    token_file = setting(args, "wildawm_token_file", "WILDAWM_TOKEN_FILE")
    client = wildawm_rl.Client(url, timeout=timeout, token_file=token_file, retries=retries, backoff=backoff,
                               max_backoff=max(backoff, wildawm_rl.DEFAULT_MAX_BACKOFF),
                               deadline=float(deadline) if deadline else None)
    batch = client.request_batch(**request)
    samples = build_samples(batch, Sample, advantage_as_reward=(mode == "reward"))
    pad = int(setting(args, "wildawm_pad_token_id", "WILDAWM_PAD_TOKEN_ID", 0))
    samples, counts = fit_to_slime(samples, wildawm_rl.batch_g(batch), gbs, policy, Sample,
                                   advantage_as_reward=(mode == "reward"), pad_token_id=pad)
    metrics = batch_metrics(batch)
    metrics.update({f"rollout/wildawm/{k}": v for k, v in counts.items()})
    metrics.update({f"rollout/wildawm/client_{k}": v for k, v in client.counts.items()})
    if counts["null_step"]:
        stats = batch.get("stats") or {}
        if counts["ready_groups"]:
            why = (f"wildawm_fill drop kept none of its {counts['ready_groups']} ready groups (G = "
                   f"{wildawm_rl.batch_g(batch)}: no whole number of them is a multiple of --global-batch-size)")
        else:
            why = (f"no ready task (mastered {stats.get('mastered')}, exhausted {stats.get('exhausted')}, "
                   f"abandoned {stats.get('abandoned')}, wildawm_fill {policy})")
        logger.warning("wildawm step %s: %s: a null step of %d null rollouts that train nothing",
                       request["step"], why, gbs)
    return RolloutFnTrainOutput(samples=samples, metrics=metrics)
