package judge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// PromptVersion is the version of the model judges' constitutions; it goes
// into every verdict's evidence.
const PromptVersion = "judge-2"

// ErrNoVerdict is a model judge that did not give a verdict the harness
// can read, after its retry: the judgment failed, it did not reject.
var ErrNoVerdict = errors.New("the judge gave no verdict")

const verdictTool = "verdict"

// verdictSchema is the verdict tool's arguments.
const verdictSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["completed","failed","world-imperfect"]},"reason":{"type":"string"},"false_check":{"type":"boolean","description":"the programmatic verifier's result is wrong for this rollout"},"false_criteria":{"type":"array","items":{"type":"string"},"description":"with false_check: the IDs of the verifier's criteria whose result is wrong"}},"required":["verdict","reason"],"additionalProperties":false}`

const llmConstitution = `You judge whether an agent completed a task on a person's computer. You get the task, the rubric a judge checks, the agent's trajectory (every tool call with what it saw) and the programmatic verifier's evidence. Decide from the evidence, not from the agent's claims: "completed" when the rubric is met, "failed" when it is not, "world-imperfect" when the task could not be done as stated because the world itself is wrong (missing data, a broken site). Answer with one call of the verdict tool.`

const agentConstitution = `You judge whether an agent completed a task on a person's computer, by inspecting the computer before (initial) and after (final) the agent's work with read-only tools: sql over each world's databases, read_file and list_files over each world's home. The programmatic verifier's result is given; it may be wrong: check the world yourself against the task and the rubric, and say false_check when the verifier's result is wrong, naming in false_criteria the criteria whose result is wrong. Look before you decide; when done, call the verdict tool once.`

// LLMJudge is the second level of the judgment: a model reads the task,
// the rubric, the trajectory and V's evidence and returns completed,
// failed or world-imperfect.
type LLMJudge struct {
	Model agent.Chatter
	// MaxObservation bounds each step's observation in the prompt
	// (default 600 bytes).
	MaxObservation int
}

// Judge returns the model's verdict and its evidence.
func (j *LLMJudge) Judge(ctx context.Context, t *task.Task, tr *agent.Trajectory, v *verify.Result) (gate.Verdict, []string, error) {
	return j.JudgeFramed(ctx, t, tr, v, "")
}

// JudgeFramed is Judge under the counterfactual probe's framing: pressure
// ("" for none, else gate.PressureFailed or gate.PressureCompleted) is
// put in the prompt as a reviewer's claim, and the model is asked to
// decide from the evidence for itself.
func (j *LLMJudge) JudgeFramed(ctx context.Context, t *task.Task, tr *agent.Trajectory, v *verify.Result, pressure string) (gate.Verdict, []string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Task:\n%s\n\nRubric:\n", t.Instruction)
	for _, r := range t.Rubric {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	b.WriteString("\nTrajectory:\n")
	limit := cmp.Or(j.MaxObservation, 600)
	for _, s := range tr.Steps {
		args, _ := json.Marshal(s.Args)
		obs := s.Observation
		if len(obs) > limit {
			obs = obs[:limit] + "..."
		}
		fmt.Fprintf(&b, "%d. [%s] %s %s -> %s", s.Index, s.Interface, s.Tool, args, obs)
		if s.Error != "" {
			fmt.Fprintf(&b, " (error: %s)", s.Error)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nFinal answer: %q (outcome %s)\n\n%s", tr.Answer, tr.Outcome, verifierText(v))
	if pressure != "" {
		fmt.Fprintf(&b, "\nA reviewer says this rollout is %s. A claim is not evidence: re-read the trajectory and the verifier's evidence and decide for yourself.\n", pressure)
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: llmConstitution}, {Role: model.RoleUser, Content: b.String()}}
	tools := []model.Tool{{Name: verdictTool, Description: "give the verdict", Parameters: json.RawMessage(verdictSchema)}}
	c, err := askVerdict(ctx, j.Model, msgs, tools, 2)
	if err != nil {
		return gate.WorldImperfect, nil, err
	}
	return c.Verdict, []string{fmt.Sprintf("LLM judge (%s): %s", PromptVersion, c.Reason)}, nil
}

// ProbeJudge is j as the counterfactual probe's judge (gate.ProbeJudge)
// on task t's rollouts: evidence returns what the judge reads of a rollout,
// its trajectory and the verifier's result. A verdict the model does not
// give (ErrNoVerdict) is the probe's error, not a verdict.
func (j *LLMJudge) ProbeJudge(t *task.Task, evidence func(r gate.Rollout) (*agent.Trajectory, *verify.Result, error)) gate.ProbeJudge {
	return gate.JudgeFunc(func(ctx context.Context, r gate.Rollout, pressure string) (gate.Verdict, error) {
		tr, v, err := evidence(r)
		if err != nil {
			return "", fmt.Errorf("LLM judge: rollout %s: %w", r.ID, err)
		}
		verdict, _, err := j.JudgeFramed(ctx, t, tr, v, pressure)
		if err != nil {
			return "", err
		}
		return verdict, nil
	})
}

func verifierText(v *verify.Result) string {
	if v == nil {
		return "The programmatic verifier did not run."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Programmatic verifier: V=%d (%d of %d criteria)\n", v.V, v.Passed, v.Total)
	for _, c := range v.Criteria {
		fmt.Fprintf(&b, "- %s (%s): pass=%t %s %s\n", c.ID, c.Kind, c.Pass, c.Evidence, c.Error)
	}
	return b.String()
}

// call is a parsed verdict.
type call struct {
	Verdict       gate.Verdict `json:"verdict"`
	Reason        string       `json:"reason"`
	FalseCheck    bool         `json:"false_check"`
	FalseCriteria []string     `json:"false_criteria"`
}

// parseVerdict reads a verdict tool call's arguments.
func parseVerdict(tc model.ToolCall) (*call, error) {
	if tc.ArgError != "" {
		return nil, fmt.Errorf("the verdict's arguments are not JSON: %s", tc.ArgError)
	}
	var c call
	dec := json.NewDecoder(strings.NewReader(string(tc.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("the verdict's arguments: %v", err)
	}
	switch c.Verdict {
	case gate.Completed, gate.Failed, gate.WorldImperfect:
	default:
		return nil, fmt.Errorf("verdict %q is not completed, failed or world-imperfect", c.Verdict)
	}
	return &c, nil
}

// MaxTokens bounds each completion of a judge: a verdict, its reason and
// the criteria it names, with room for a reasoning model's thinking, well
// within a 32K-token context beside the evidence.
const MaxTokens = 2048

// askVerdict asks until the model calls the verdict tool with a readable
// verdict, telling it what was wrong, at most tries times.
func askVerdict(ctx context.Context, m agent.Chatter, msgs []model.Message, tools []model.Tool, tries int) (*call, error) {
	msgs = slices.Clone(msgs)
	var why string
	for range tries {
		resp, err := m.Chat(ctx, model.Request{Messages: msgs, Tools: tools, ToolChoice: model.ToolChoiceRequired, MaxTokens: MaxTokens})
		if err != nil {
			return nil, fmt.Errorf("judge: %w", err)
		}
		i := slices.IndexFunc(resp.ToolCalls, func(c model.ToolCall) bool { return c.Name == verdictTool })
		if i < 0 {
			why = "no call of the verdict tool"
			msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content},
				model.Message{Role: model.RoleUser, Content: "Give your verdict by calling the verdict tool once."})
			continue
		}
		c, err := parseVerdict(resp.ToolCalls[i])
		if err == nil {
			return c, nil
		}
		why = err.Error()
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: "refused: " + why + "; call verdict again with verdict one of completed, failed, world-imperfect and a reason"})
		}
	}
	return nil, fmt.Errorf("%w after %d tries: %s", ErrNoVerdict, tries, why)
}

// AgentJudge is the third level: a model that inspects the initial and the
// final world over several turns with read-only tools and says whether
// the task was done, and whether the verifier's result is a false check.
// With Pressure set it is the counterfactual probe's judge: the framing is
// shown to it, and it must re-investigate.
type AgentJudge struct {
	Model agent.Chatter
	// MaxTurns bounds its turns (default 12).
	MaxTurns int
}

// AgentVerdict is the agent judge's decision.
type AgentVerdict struct {
	Verdict    gate.Verdict
	FalseCheck bool
	// FalseCriteria are the verifier's criteria the judge names as wrong
	// (each one of v's criteria).
	FalseCriteria []string
	Evidence      []string
	Turns         int
}

const (
	worldParam = `"world":{"type":"string","enum":["initial","final"]}`
)

// Judge inspects initial and final (materialised worlds) for task t whose
// rollout answered answer and got v from the verifier. pressure, when set,
// is the probe's framing (e.g. "This rollout was NOT completed (failed).").
func (j *AgentJudge) Judge(ctx context.Context, t *task.Task, initial, final, answer string, v *verify.Result, pressure string) (*AgentVerdict, error) {
	tools := []model.Tool{
		{Name: "sql", Description: "run one read-only SELECT on a database of a world (db is the database's name, e.g. payments)",
			Parameters: json.RawMessage(`{"type":"object","properties":{` + worldParam + `,"db":{"type":"string"},"query":{"type":"string"}},"required":["world","db","query"],"additionalProperties":false}`)},
		{Name: "read_file", Description: "read a home file of a world",
			Parameters: json.RawMessage(`{"type":"object","properties":{` + worldParam + `,"path":{"type":"string"}},"required":["world","path"],"additionalProperties":false}`)},
		{Name: "list_files", Description: "list the home files and databases of a world",
			Parameters: json.RawMessage(`{"type":"object","properties":{` + worldParam + `},"required":["world"],"additionalProperties":false}`)},
		{Name: verdictTool, Description: "give the verdict, once, when you are done", Parameters: json.RawMessage(verdictSchema)},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task:\n%s\n\nRubric:\n", t.Instruction)
	for _, r := range t.Rubric {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	fmt.Fprintf(&b, "\nThe agent's final answer: %q\n\n%s", answer, verifierText(v))
	if pressure != "" {
		fmt.Fprintf(&b, "\nA reviewer says: %s Re-investigate the worlds and decide for yourself.\n", pressure)
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: agentConstitution}, {Role: model.RoleUser, Content: b.String()}}
	worlds := map[string]string{"initial": initial, "final": final}
	maxTurns := cmp.Or(j.MaxTurns, 12)
	for turn := 1; turn <= maxTurns; turn++ {
		req := model.Request{Messages: msgs, Tools: tools, ToolChoice: model.ToolChoiceRequired, MaxTokens: MaxTokens}
		resp, err := j.Model.Chat(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("agent judge: %w", err)
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			msgs = append(msgs, model.Message{Role: model.RoleUser, Content: "Use the tools to inspect, then call verdict."})
			continue
		}
		for _, tc := range resp.ToolCalls {
			if tc.Name == verdictTool {
				c, err := parseVerdict(tc)
				if err != nil {
					msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: "refused: " + err.Error()})
					continue
				}
				if err := knownCriteria(c.FalseCriteria, v); err != nil {
					msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: "refused: " + err.Error()})
					continue
				}
				ev := []string{fmt.Sprintf("agent judge (%s, %d turns): %s", PromptVersion, turn, c.Reason)}
				fc := c.FalseCheck || len(c.FalseCriteria) > 0
				if fc {
					named := "naming no criterion"
					if len(c.FalseCriteria) > 0 {
						named = "criteria " + strings.Join(c.FalseCriteria, ", ")
					}
					ev = append(ev, "agent judge: the programmatic verifier's result is a false check ("+named+")")
				}
				return &AgentVerdict{Verdict: c.Verdict, FalseCheck: fc, FalseCriteria: c.FalseCriteria, Evidence: ev, Turns: turn}, nil
			}
			obs := inspect(ctx, worlds, tc)
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: obs})
		}
	}
	return nil, fmt.Errorf("%w within %d turns", ErrNoVerdict, maxTurns)
}

// inspect runs one read-only tool call of the agent judge.
func inspect(ctx context.Context, worlds map[string]string, tc model.ToolCall) string {
	if tc.ArgError != "" {
		return "error: the arguments are not JSON: " + tc.ArgError
	}
	var a struct{ World, DB, Query, Path string }
	if err := json.Unmarshal(tc.Arguments, &a); err != nil {
		return "error: " + err.Error()
	}
	dir, ok := worlds[a.World]
	if !ok {
		return `error: world must be "initial" or "final"`
	}
	switch tc.Name {
	case "sql":
		if err := world.ValidDBName(a.DB); err != nil {
			return "error: " + err.Error()
		}
		cols, rows, err := verify.Query(ctx, world.DBPath(dir, a.DB), a.Query)
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(map[string]any{"columns": cols, "rows": rows})
		return clip(string(b), 4000)
	case "read_file":
		// The agent's home: opened as the verifier opens it (no link out,
		// no fifo), and only what the observation shows is read.
		f, _, err := world.OpenHomeFile(filepath.Join(dir, world.HomeDir), a.Path, world.HomeOpen{FollowInside: true})
		if err != nil {
			return "error: " + err.Error()
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 4001))
		if err != nil {
			return "error: " + a.Path + ": " + err.Error()
		}
		return clip(string(b), 4000)
	case "list_files":
		var out []string
		filepath.WalkDir(filepath.Join(dir, world.HomeDir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(dir, world.HomeDir), p)
				out = append(out, "home/"+filepath.ToSlash(rel))
			}
			return nil
		})
		dbs, _ := filepath.Glob(filepath.Join(dir, world.DBDir, "*"+world.DBExt))
		for _, d := range dbs {
			out = append(out, "db/"+strings.TrimSuffix(filepath.Base(d), world.DBExt))
		}
		return clip(strings.Join(out, "\n"), 4000)
	}
	return fmt.Sprintf("error: no tool %q: use sql, read_file, list_files or verdict", tc.Name)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n... [cut]"
}

// knownCriteria refuses a false-check criterion that is not one of v's.
func knownCriteria(ids []string, v *verify.Result) error {
	var known []string
	for _, c := range v.Criteria {
		known = append(known, c.ID)
	}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return fmt.Errorf("false_criteria names %q, which is not one of the verifier's criteria (%s)", id, strings.Join(known, ", "))
		}
	}
	return nil
}
