package external

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
)

// Run is one rollout of an external harness.
type Run struct {
	// Prompt is the task as the user's message (sent on stdin, verbatim).
	Prompt string
	// System, when set, replaces the harness's own system prompt
	// (opencode's is a coding assistant's); opencode still appends its
	// environment block (model, working directory, platform, date).
	System string
	// Temperature, when set, is sent with every request (opencode sends
	// none by default, leaving the server's).
	Temperature *float64
	// ModelBaseURL is the OpenAI-compatible endpoint's base URL, ending in
	// /v1 (vLLM, SGLang, a hosted API); Model the model's name there.
	ModelBaseURL string
	Model        string
	// APIKey is sent as a bearer token; "" sends none.
	APIKey string
	// ContextTokens and OutputTokens are the model's context window and
	// the most tokens one reply may take (max_tokens); 0 leaves them to
	// the harness (opencode asks for up to 32,000 output tokens, which a
	// server with a small context window rejects).
	ContextTokens, OutputTokens int
	// MCP maps a server's name to its streamable-HTTP URL: Gateway for
	// wildawm's own tools, and each service of the instance by its name.
	MCP map[string]string
	// WorkDir holds everything of the run: the harness's home, its
	// configuration, the transcript, the log and the trajectory. It is
	// made if missing and must not hold an earlier run.
	WorkDir string
	// Timeout bounds the run (default 20 minutes); a run that takes
	// longer is killed and ends as budget (the wall-time budget, the
	// agent's failure, as in the wildawm harness).
	Timeout time.Duration
	// MaxTurns bounds the model turns (opencode's steps, counted in its
	// event stream as they come); past it the run is killed and ends as
	// budget, as the wildawm harness's turn budget. 0: no bound (opencode
	// has none of its own).
	MaxTurns int
}

// DefaultTimeout is a Run's timeout when it sets none.
const DefaultTimeout = 20 * time.Minute

// Result is a finished run: the trajectory and where its files are.
type Result struct {
	Trajectory *agent.Trajectory
	// Transcript is the harness's raw event stream, kept next to the
	// trajectory (TrajectoryPath); Log its log (stderr); Config the
	// configuration it ran with.
	Transcript, Log, Config, TrajectoryPath string
	// ExitCode is the harness's exit status (-1 when it was killed).
	ExitCode int
	// PID is the harness's process id, also its process group's.
	PID int
	// Parsed is the transcript's content beyond the steps (usage, finish
	// reason, error events).
	Parsed *Transcript
}

// Files of a work directory.
const (
	ConfigFile     = "opencode.json"
	TranscriptFile = "transcript.jsonl"
	LogFile        = "opencode.log"
	TrajectoryFile = "trajectory.json"
)

// HarnessName is the harness's name in trajectories.
const HarnessName = "opencode"

// Provider is the provider id the generated configuration gives the model
// endpoint; the model is then "wildawm/MODEL".
const Provider = "wildawm"

// EnvBinary names the opencode binary (WILDAWM_OPENCODE); else
// DefaultPrefix's, else PATH's.
const EnvBinary = "WILDAWM_OPENCODE"

// DefaultPrefix is where .ci/opencode installs opencode-ai.
const DefaultPrefix = "/opt/wildawm/opencode"

// apiKeyEnv carries the API key to the configuration's {env:...}, so that
// no key is written to disk.
const apiKeyEnv = "WILDAWM_MODEL_API_KEY"

// ErrNoBinary is returned when no opencode binary is found.
var ErrNoBinary = errors.New("opencode not found: install it with `bash .ci/opencode` (npm install opencode-ai into " + DefaultPrefix + ") or set " + EnvBinary)

// FindOpencode returns the opencode binary: $WILDAWM_OPENCODE, else
// DefaultPrefix's, else the one on PATH.
func FindOpencode() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	p := filepath.Join(DefaultPrefix, "node_modules", ".bin", "opencode")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("opencode"); err == nil {
		return p, nil
	}
	return "", ErrNoBinary
}

// Opencode runs the opencode CLI.
type Opencode struct {
	// Bin is the binary; "" means FindOpencode's.
	Bin string
	// Route records the MCP tools' calls; nil means DefaultRouter.
	Route Router
}

// OpencodeConfig is the configuration a run gets (docs/external-harness.md):
// one provider of the OpenAI-compatible chat-completions API with the
// run's base URL and model, each MCP server as a remote entry, every
// permission denied but the MCP servers' tools (so none of opencode's own
// tools, which act on the host, is offered to the model, and nothing asks
// interactively), no auto-update, no sharing, no snapshots, no LSP or
// formatters.
func OpencodeConfig(r Run) ([]byte, error) {
	if r.ModelBaseURL == "" || r.Model == "" {
		return nil, errors.New("opencode config: the model's base URL and name are required")
	}
	options := map[string]any{"baseURL": r.ModelBaseURL}
	if r.APIKey != "" {
		options["apiKey"] = "{env:" + apiKeyEnv + "}"
	}
	// tool_call and temperature are the model's capabilities: opencode
	// sends a temperature only to a model that has the latter.
	m := map[string]any{"name": r.Model, "tool_call": true, "temperature": true}
	if r.ContextTokens > 0 || r.OutputTokens > 0 {
		m["limit"] = map[string]any{"context": r.ContextTokens, "output": r.OutputTokens}
	}
	// Permissions: the last matching rule wins, and opencode puts these
	// after its own defaults.
	perm := []kv{{"*", "deny"}, {"doom_loop", "allow"}}
	mcp := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(r.MCP)) {
		if name == "" || strings.Contains(name, "*") {
			return nil, fmt.Errorf("opencode config: MCP server name %q", name)
		}
		mcp[name] = map[string]any{"type": "remote", "url": r.MCP[name], "enabled": true, "oauth": false}
		perm = append(perm, kv{sanitize(name) + "_*", "allow"})
	}
	full := Provider + "/" + r.Model
	cfg := ordered{
		{"$schema", "https://opencode.ai/config.json"},
		{"autoupdate", false},
		{"share", "disabled"},
		{"snapshot", false},
		{"lsp", false},
		{"formatter", false},
		{"enabled_providers", []string{Provider}},
		{"model", full},
		{"small_model", full},
		{"provider", map[string]any{Provider: map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "wildawm model endpoint",
			"options": options,
			"models":  map[string]any{r.Model: m},
		}}},
		{"mcp", mcp},
		{"permission", ordered(perm)},
	}
	// The agent opencode runs is "build"; its prompt and temperature are
	// the run's when set.
	build := map[string]any{}
	if r.System != "" {
		build["prompt"] = r.System
	}
	if r.Temperature != nil {
		build["temperature"] = *r.Temperature
	}
	if len(build) > 0 {
		cfg = append(cfg, kv{"agent", map[string]any{"build": build}})
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("opencode config: %w", err)
	}
	return append(b, '\n'), nil
}

// kv and ordered write a JSON object in a fixed order: opencode reads its
// permission rules in order.
type kv struct {
	k string
	v any
}

type ordered []kv

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// environment is the harness's whole environment: a home of its own (so a
// run never reads or writes the user's configuration, sessions or caches),
// opencode's switches for a non-interactive, offline-safe run, npm offline
// (opencode looks up packages for its configuration directory; none is
// needed), and PATH.
func environment(dir string, r Run) []string {
	home := filepath.Join(dir, "home")
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TMPDIR=" + filepath.Join(dir, "tmp"),
		"LANG=C.UTF-8",
		"OPENCODE_CONFIG=" + filepath.Join(dir, ConfigFile),
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_PROJECT_CONFIG=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"npm_config_offline=true",
		"npm_config_update_notifier=false",
	}
	if r.APIKey != "" {
		env = append(env, apiKeyEnv+"="+r.APIKey)
	}
	return env
}

// Run runs opencode on r and returns its trajectory, saved as
// WorkDir/trajectory.json next to the raw transcript. The harness's own
// failures (a non-zero exit, a provider error, the timeout) are the
// outcome infra_error with the message; a transcript that cannot be
// parsed is an error. Cancelling ctx kills the harness's process group and
// returns the trajectory so far with ctx's error.
func (o *Opencode) Run(ctx context.Context, r Run) (*Result, error) {
	if strings.TrimSpace(r.Prompt) == "" {
		return nil, errors.New("opencode: an empty prompt")
	}
	if r.WorkDir == "" {
		return nil, errors.New("opencode: no work directory")
	}
	cfg, err := OpencodeConfig(r)
	if err != nil {
		return nil, err
	}
	bin := o.Bin
	if bin == "" {
		if bin, err = FindOpencode(); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(r.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	res := &Result{
		Config:         filepath.Join(dir, ConfigFile),
		Transcript:     filepath.Join(dir, TranscriptFile),
		Log:            filepath.Join(dir, LogFile),
		TrajectoryPath: filepath.Join(dir, TrajectoryFile),
		ExitCode:       -1,
	}
	if _, err := os.Stat(res.Transcript); err == nil {
		return nil, fmt.Errorf("opencode: %s holds an earlier run (%s)", dir, TranscriptFile)
	}
	cwd := filepath.Join(dir, "cwd")
	for _, d := range []string{cwd, filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("opencode: %w", err)
		}
	}
	if err := os.WriteFile(res.Config, cfg, 0o644); err != nil {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	out, err := os.Create(res.Transcript)
	if err != nil {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	defer out.Close()
	logf, err := os.Create(res.Log)
	if err != nil {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	defer logf.Close()

	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, "run",
		"--format", "json",
		"--model", Provider+"/"+r.Model,
		"--title", "wildawm", // a title of its own: no title request to the model
		"--thinking", // reasoning events too
		"--print-logs", "--log-level", "INFO")
	cmd.Dir = cwd
	cmd.Env = environment(dir, r)
	cmd.Stdin = strings.NewReader(r.Prompt)
	turns := &turnCounter{w: out, max: r.MaxTurns, over: cancel}
	cmd.Stdout = turns
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("opencode: start %s: %w", bin, err)
	}
	res.PID = cmd.Process.Pid
	waitErr := cmd.Wait()
	killGroup(res.PID) // whatever it left behind
	wall := time.Since(start)
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}

	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, Policy: "model:" + r.Model,
		Harness: HarnessName, Model: r.Model, Steps: []agent.Step{}, WallMS: float64(wall.Microseconds()) / 1000}
	res.Trajectory = traj
	f, err := os.Open(res.Transcript)
	if err != nil {
		return res, fmt.Errorf("opencode: %w", err)
	}
	parsed, perr := ParseOpencode(f, slices.Collect(maps.Keys(r.MCP)), o.Route)
	f.Close()
	res.Parsed = parsed
	traj.Steps = append(traj.Steps, parsed.Steps...)
	traj.Turns = parsed.Turns
	if len(parsed.Turns) > 0 {
		traj.Segments = []agent.Segment{{Index: 0, FirstTurn: 1, LastTurn: len(parsed.Turns), Reason: "start"}}
	}
	traj.Answer = parsed.Answer
	traj.Outcome = agent.OutcomeDone
	var why string
	outcome := agent.OutcomeInfra
	switch {
	case ctx.Err() != nil:
		why = "cancelled: " + ctx.Err().Error()
	case turns.exceeded.Load():
		outcome = agent.OutcomeBudget
		why = fmt.Sprintf("opencode began turn %d, past the turn budget of %d (--max-turns)", r.MaxTurns+1, r.MaxTurns)
	case rctx.Err() != nil:
		// The wall-time budget, as the wildawm harness's: the agent's.
		outcome = agent.OutcomeBudget
		why = fmt.Sprintf("opencode timed out after %s", timeout)
		if last := lastLogError(res.Log); last != "" {
			why += "; its last error: " + last
		}
	case len(parsed.Errors) > 0:
		why = strings.Join(parsed.Errors, "; ")
	case waitErr != nil:
		why = fmt.Sprintf("opencode: %v", waitErr)
		if last := lastLogError(res.Log); last != "" {
			why += ": " + last
		}
	}
	if len(parsed.FormatErrors) > 0 && (why == "" || outcome == agent.OutcomeBudget) {
		// The wildawm harness ends a rollout at a call whose arguments
		// are not a JSON object, as a format failure; opencode goes on
		// (it answers the call as one of an "invalid" tool): the same
		// reply is the same failure under both.
		outcome, why = agent.OutcomeFormat, "format failure: "+parsed.FormatErrors[0]
	}
	if why != "" {
		traj.Outcome, traj.Error, traj.Failure = outcome, why, agent.FailureOf(outcome)
	}
	var le *LineError
	if perr != nil && rctx.Err() != nil && errors.As(perr, &le) && le.Unterminated {
		perr = nil // killed in the middle of a line: the steps before it stand
	}
	if perr != nil {
		return res, perr
	}
	if err := traj.Save(res.TrajectoryPath); err != nil {
		return res, fmt.Errorf("opencode: %w", err)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("opencode: %w", ctx.Err())
	}
	return res, nil
}

// turnCounter passes opencode's event stream to w and counts its steps
// (a step_start event begins each model turn); the first past max calls
// over, which kills the run.
type turnCounter struct {
	w        io.Writer
	max      int
	over     func()
	partial  []byte
	n        int
	exceeded atomic.Bool
}

func (c *turnCounter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if c.max <= 0 || c.exceeded.Load() {
		return n, err
	}
	c.partial = append(c.partial, b[:n]...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := c.partial[:i]
		c.partial = c.partial[i+1:]
		if bytes.Contains(line, []byte(`"type":"step_start"`)) {
			if c.n++; c.n > c.max {
				c.exceeded.Store(true)
				c.over()
				break
			}
		}
	}
	if len(c.partial) > 1<<20 {
		c.partial = nil // a line that long carries no step_start of interest
	}
	return n, err
}

// killGroup kills a process group; one already gone is no error.
func killGroup(pgid int) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

var logErr = regexp.MustCompile(`level=ERROR .*?\berror(?:\.error)?="((?:[^"\\]|\\.)*)"`)

// lastLogError is the last error opencode logged (its log is logfmt), or "".
func lastLogError(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := logErr.FindStringSubmatch(lines[i]); m != nil {
			return strings.ReplaceAll(m[1], `\"`, `"`)
		}
	}
	return ""
}
