package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/model"
)

// modelFlags are the settings of every model request a command sends,
// whatever its stage: the time-out of one request (for all stages, or
// per stage), the retries of a failed one and the wait before the first
// retry. They are the root command's, so every command that talks to a
// model takes them.
type modelFlags struct {
	timeout string
	retries int
	backoff time.Duration
}

// modelStages are the stages a --model-timeout may name: each model flag
// without its dashes and "-model" (--judge-model: judge).
var modelStages = []string{"agent", "author", "embeddings", "ensemble", "judge", "model", "sketch", "teacher", "vision"}

func (m *modelFlags) register(c *cobra.Command) {
	fl := c.PersistentFlags()
	fl.StringVar(&m.timeout, "model-timeout", model.DefaultTimeout.String(), "the time-out of one model request: a duration for every stage (300s), or STAGE=DURATION,... per stage ("+strings.Join(modelStages, ", ")+"; judge=60s,ensemble=10m), the rest at the default")
	fl.IntVar(&m.retries, "model-retries", model.DefaultMaxRetries, "retries of a model request that failed (connection refused, a reply cut mid-way, HTTP 429 and 5xx) before the stage's step fails")
	fl.DurationVar(&m.backoff, "model-backoff", model.DefaultBackoff, "the wait before the first retry of a model request, doubled before each next (at most 30s, or the server's Retry-After)")
}

// stageOf is the stage of a model flag: "--judge-model" is judge, "--agent"
// agent.
func stageOf(flag string) string {
	return strings.TrimSuffix(strings.TrimPrefix(flag, "--"), "-model")
}

// options are the model.Options of the model a flag names, or an error
// naming the bad flag.
func (m *modelFlags) options(flag string) (*model.Options, error) {
	timeout, err := m.timeoutOf(stageOf(flag))
	if err != nil {
		return nil, err
	}
	if m.retries < 0 {
		return nil, fmt.Errorf("--model-retries %d: give the retries of a failed model request, 0 or more", m.retries)
	}
	if m.backoff <= 0 {
		return nil, fmt.Errorf("--model-backoff %s: give a positive wait, e.g. 1s", m.backoff)
	}
	retries := m.retries
	if retries == 0 {
		retries = -1 // none: model.Options' zero is the default
	}
	return &model.Options{Timeout: timeout, MaxRetries: retries, Backoff: m.backoff, TimeoutSetting: "--model-timeout"}, nil
}

// timeoutOf is --model-timeout's time-out for stage.
func (m *modelFlags) timeoutOf(stage string) (time.Duration, error) {
	v := strings.TrimSpace(m.timeout)
	if v == "" {
		return model.DefaultTimeout, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("--model-timeout %q: %s: give a duration (300s, 10m) for every stage, or STAGE=DURATION,... with the stages %s", m.timeout, why, strings.Join(modelStages, ", "))
	}
	positive := func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			if n, nerr := strconv.Atoi(strings.TrimSpace(s)); nerr == nil {
				return 0, bad(fmt.Sprintf("%d has no unit (%ds?)", n, n))
			}
			return 0, bad(fmt.Sprintf("%q is not a duration", s))
		}
		if d <= 0 {
			return 0, bad(fmt.Sprintf("%s is not positive", d))
		}
		return d, nil
	}
	if !strings.Contains(v, "=") {
		return positive(v)
	}
	out := model.DefaultTimeout
	for _, part := range strings.Split(v, ",") {
		k, dv, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || !slices.Contains(modelStages, k) {
			return 0, bad(fmt.Sprintf("%q is not STAGE=DURATION with a known stage", strings.TrimSpace(part)))
		}
		d, err := positive(dv)
		if err != nil {
			return 0, err
		}
		if k == stage {
			out = d
		}
	}
	return out, nil
}

// check refuses a bad --model-timeout, --model-retries or --model-backoff
// before anything runs.
func (m *modelFlags) check() error {
	for _, s := range modelStages {
		if _, err := m.options("--" + s); err != nil {
			return err
		}
	}
	return nil
}
