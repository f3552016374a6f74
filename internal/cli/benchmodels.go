package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/trainer"
	"github.com/wildawm/wildawm/internal/world"
)

// The model-path matrix: every model path of wildawm, run by its own code
// against the fake server in each engine's reply shape, under each
// misbehaviour a real server shows; the outcome of each cell is what the
// path did, classified, never a table typed in.

// mbPath is one model path: the stage code that calls a model.
type mbPath struct {
	name string
	// healthy is the path's good reply.
	healthy fake.Turn
	// run runs the path against c and classifies what it did.
	run func(ctx context.Context, c *model.Client, home string) string
}

// misbehaviour is one way a server replies: its first reply is turn (or
// every reply, with always), later ones the path's healthy reply; setup
// configures the server.
type misbehaviour struct {
	name   string
	turn   fake.Turn
	always bool
	setup  func(*fake.Server)
	// only names the paths it applies to; nil means every chat path.
	only []string
}

const (
	pathAgent      = "agent turn (harness)"
	pathJudge      = "judge verdict"
	pathRL         = "RL rollout (token ids)"
	pathEmbeddings = "embeddings (diversity gate)"
)

func modelPaths() []mbPath {
	answer := fake.Turn{Content: "The total is 42.", PromptTokenIDs: []int{1, 2, 3}, CompletionTokenIDs: []int{40, 41, 42}}
	return []mbPath{
		{name: pathAgent, healthy: answer, run: runAgentPath(false)},
		{name: pathJudge, healthy: fake.Turn{ToolCalls: []fake.ToolCall{{Name: "verdict", Arguments: `{"verdict":"completed","reason":"the total is right"}`}}}, run: runJudgePath},
		{name: pathRL, healthy: answer, run: runAgentPath(true)},
		{name: pathEmbeddings, run: runEmbeddingsPath},
	}
}

func misbehaviours() []misbehaviour {
	read := func(args string) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "read_file", Arguments: args}}}
	}
	chat := []string{pathAgent, pathJudge, pathRL}
	vec := func(f func(n int) []float64) func(*fake.Server) {
		return func(s *fake.Server) {
			n := 0
			s.SetEmbedder(func(string) []float64 { n++; return f(n) })
		}
	}
	return []misbehaviour{
		{name: "healthy", only: append(chat, pathEmbeddings)},
		{name: "reasoning inline (<think>)", turn: fake.Turn{Content: "<think>Maybe 41? No.</think>The total is 42.", PromptTokenIDs: []int{1}, CompletionTokenIDs: []int{9}}},
		{name: "parallel tool calls", turn: fake.Turn{ToolCalls: []fake.ToolCall{{Name: "read_file", Arguments: `{"path":"x"}`}, {Name: "list_files", Arguments: `{"path":"."}`}}}},
		{name: "arguments not JSON", turn: read(`{"path": "x`)},
		{name: "arguments not an object", turn: read(`["x"]`)},
		{name: "arguments empty", turn: read(``)},
		{name: "unknown tool", turn: fake.Turn{ToolCalls: []fake.ToolCall{{Name: "delete_everything", Arguments: `{}`}}}},
		{name: "text only", turn: fake.Turn{Content: "Let me think about it."}, only: []string{pathJudge}},
		{name: "tool call written as text", turn: fake.Turn{Content: "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}\n</tool_call>"}},
		{name: "finish_reason length", turn: fake.Turn{Content: "The total is", FinishReason: "length"}},
		{name: "empty choices", turn: fake.Turn{Body: `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}`, BodyType: "application/json"}},
		{name: "429 with Retry-After", turn: fake.Turn{Status: 429, Error: "rate limited", RetryAfter: time.Second}},
		{name: "HTTP 500", turn: fake.Turn{Status: 500, Error: "internal error"}},
		{name: "HTTP 502", turn: fake.Turn{Status: 502, Error: "bad gateway"}},
		{name: "HTTP 503", turn: fake.Turn{Status: 503, Error: "Loading model"}},
		{name: "body cut mid-way", turn: fake.Turn{Content: "The total is 42.", CutAfter: 40}},
		{name: "non-JSON 200", turn: fake.Turn{Body: "<html>proxy login</html>"}},
		{name: "slower than the timeout", turn: fake.Turn{Content: "late", Delay: 2 * time.Second}},
		{name: "no logprobs", turn: fake.Turn{Content: "The total is 42.", CompletionTokenIDs: []int{40}, NoLogprobs: true}, only: []string{pathRL}},
		{name: "logprobs misaligned", turn: fake.Turn{Content: "The total is 42.", CompletionTokenIDs: []int{40, 41}, Logprobs: []float64{-1}}, only: []string{pathRL}},
		{name: "no token ids", turn: fake.Turn{Content: "The total is 42."}, only: []string{pathRL}},
		{name: "tool calling not enabled", setup: func(s *fake.Server) { s.SetToolCalling(false) }, turn: read(`{"path":"x"}`)},
		{name: "outage (every reply 503)", turn: fake.Turn{Status: 503, Error: "no healthy upstream"}, always: true},
		{name: "other dimensions", setup: vec(func(n int) []float64 { v := make([]float64, 8+n%2); v[0] = 1; return v }), only: []string{pathEmbeddings}},
		{name: "unnormalised", setup: vec(func(n int) []float64 {
			v := fake.Embedding(fmt.Sprint("text ", n))
			for i := range v {
				v[i] *= 37
			}
			return v
		}), only: []string{pathEmbeddings}},
		{name: "embeddings HTTP 503 once", setup: embedFails(fake.Turn{Status: 503, Error: "Loading model"}, false), only: []string{pathEmbeddings}},
		{name: "embeddings cut mid-way once", setup: embedFails(fake.Turn{CutAfter: 30}, false), only: []string{pathEmbeddings}},
		{name: "embeddings outage", setup: embedFails(fake.Turn{Status: 503, Error: "no healthy upstream"}, true), only: []string{pathEmbeddings}},
		{name: "zero vector", setup: vec(func(int) []float64 { return make([]float64, 8) }), only: []string{pathEmbeddings}},
		{name: "NaN", setup: vec(func(int) []float64 { return []float64{1, math.NaN(), 0} }), only: []string{pathEmbeddings}},
	}
}

// embedFails makes the first embedding request fail as t, or every one.
func embedFails(t fake.Turn, always bool) func(*fake.Server) {
	return func(s *fake.Server) {
		s.SetEmbedFailures(func(n int) fake.Turn {
			if n == 1 || always {
				return t
			}
			return fake.Turn{}
		})
	}
}

func (m misbehaviour) appliesTo(path string) bool {
	if m.only == nil {
		return path != pathEmbeddings
	}
	for _, p := range m.only {
		if p == path {
			return true
		}
	}
	return false
}

// matrixEngines are the matrix's columns.
func matrixEngines() []model.Engine {
	return append([]model.Engine{model.EngineAny}, model.Engines()...)
}

func (e *env) benchModelsCmd() *cobra.Command {
	var out string
	var turns int
	c := &cobra.Command{
		Use:   "models [--out FILE] [--turns 200]",
		Short: "The model-path matrix: each path x server shape x misbehaviour, and what the path did",
		Long: `Runs every model path of wildawm (an agent's turn through the harness, a judge's
verdict, an RL rollout's token ids, the diversity gate's embeddings) by its own
code against the local fake OpenAI-compatible server, in each engine's reply shape
(an unnamed server, vLLM, SGLang, Ollama, llama.cpp, a strict hosted API), under
each misbehaviour a real server shows. The first reply misbehaves and later ones
are healthy, except for the outage. The client retries twice, 1 ms apart, with
a 500 ms timeout per attempt.

Each cell is what the path did:
  done       the path finished (retried: N requests beyond the healthy run's)
  format     the agent's format failure (its rollout fails as a format error)
  infra      an infrastructure failure, recorded and retried later, never a verdict
  no signal  the RL service refuses the rollout's turns, naming the fix
  refused    the stage refuses the server or its vectors before using them
             (an RL engine without token ids; embeddings, naming --embeddings)
  error      the stage stops with an error naming server and fix (a server not
             started to call tools stops every stage; a judge's other errors are
             recorded by the pool as its missing verdict, an infrastructure failure)
The table goes to stdout, or to --out as markdown. Then --turns model turns
are timed through the harness (one read_file call each) beside the same request
sent by the client alone, interleaved: the harness's overhead per turn.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out != "" {
				var b strings.Builder
				if err := e.modelMatrix(cmd.Context(), &b); err != nil {
					return err
				}
				if err := world.WriteFileAtomic(out, []byte(b.String()), 0o644); err != nil {
					return err
				}
			} else if err := e.modelMatrix(cmd.Context(), e.stdout); err != nil {
				return err
			}
			if turns <= 0 {
				return nil
			}
			fmt.Fprintf(e.stdout, "harness overhead per model turn (%d turns each, interleaved, local fake server)\n", turns)
			return e.benchTurns(cmd.Context(), turns)
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the matrix to this file instead of stdout")
	c.Flags().IntVar(&turns, "turns", 200, "then time this many model turns through the harness beside the client's request alone (0: none)")
	return c
}

func (e *env) modelMatrix(ctx context.Context, w io.Writer) error {
	home, err := os.MkdirTemp("", "wildawm-bench-models-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := os.WriteFile(filepath.Join(home, "x"), []byte("the total is 42\n"), 0o644); err != nil {
		return err
	}
	engines := matrixEngines()
	fmt.Fprintf(w, "Model-path matrix (wildawm bench models): each path's own code against the fake server in each engine's reply shape.\n\n")
	for _, p := range modelPaths() {
		var notes []string               // what the failures said, in order
		where := map[string]*noteWhere{} // and where they said it
		rows := 0
		base := make([]int, len(engines))
		for i, en := range engines {
			base[i] = baseline(ctx, p, en, home)
		}
		fmt.Fprintf(w, "### %s\n\n| misbehaviour |", p.name)
		for _, en := range engines {
			fmt.Fprintf(w, " %s |", engineColumn(en))
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(engines)))
		for _, m := range misbehaviours() {
			if !m.appliesTo(p.name) {
				continue
			}
			rows++
			fmt.Fprintf(w, "| %s |", m.name)
			// A row's cells run at once (each on its own server): the
			// waits, a Retry-After or a time-out, overlap.
			cells, details := make([]string, len(engines)), make([]string, len(engines))
			var wg sync.WaitGroup
			for i, en := range engines {
				wg.Go(func() { cells[i], details[i] = runCell(ctx, p, m, en, home, base[i]) })
			}
			wg.Wait()
			for i, en := range engines {
				cell, detail := cells[i], details[i]
				if detail != "" {
					note := servers.ReplaceAllString(detail, "SERVER")
					if where[note] == nil {
						notes = append(notes, note)
						where[note] = &noteWhere{}
					}
					where[note].add(m.name, engineColumn(en))
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			fmt.Fprintln(w)
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "\nWhat the failures said:\n\n")
		}
		for _, n := range notes {
			fmt.Fprintf(w, "- %s (%s)\n", n, where[n].describe(rows))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// servers are the fake servers' addresses and specs, which differ from
// run to run and engine to engine.
var servers = regexp.MustCompile(`([a-z]+\+)?http://127\.0\.0\.1:\d+/v1(#[^\s):;,]+)?`)

func engineColumn(e model.Engine) string {
	if e == model.EngineAny {
		return "unnamed"
	}
	return string(e)
}

// matrixOptions are the client's options in every cell.
var matrixOptions = model.Options{MaxRetries: 2, Backoff: time.Millisecond, Timeout: 500 * time.Millisecond}

// baseline is how many requests path p makes of a healthy server of
// engine en.
func baseline(ctx context.Context, p mbPath, en model.Engine, home string) int {
	srv := fake.NewResponder(nil, func(fake.Request) fake.Turn { return p.healthy })
	defer srv.Close()
	srv.SetEngine(en)
	c, _ := model.New(srv.Spec(), &matrixOptions)
	p.run(ctx, c, home)
	return requests(srv)
}

// runCell runs path p against a fresh fake server of engine en that
// misbehaves as m, and returns the cell and what an error said; baseline
// is the path's requests of a healthy server.
func runCell(ctx context.Context, p mbPath, m misbehaviour, en model.Engine, home string, baseline int) (cell, said string) {
	bad := m.turn
	if p.name == pathRL && bad.CompletionTokenIDs == nil && m.name != "no token ids" {
		// A policy's turns carry token ids unless the misbehaviour is
		// their absence.
		bad.PromptTokenIDs, bad.CompletionTokenIDs = []int{1, 2, 3}, []int{7, 8}
	}
	var first = true
	srv := fake.NewResponder(nil, func(fake.Request) fake.Turn {
		if first || m.always {
			first = false
			if m.name != "healthy" {
				return bad
			}
		}
		return p.healthy
	})
	defer srv.Close()
	srv.SetEngine(en)
	if m.setup != nil {
		m.setup(srv)
	}
	c, err := model.New(srv.Spec(), &matrixOptions)
	if err != nil {
		return "error", err.Error()
	}
	out := p.run(ctx, c, home)
	class, detail, _ := strings.Cut(out, ": ")
	if class == "done" {
		if extra := requests(srv) - baseline; extra > 0 {
			class = fmt.Sprintf("done (+%d)", extra)
		}
	}
	return class, detail
}

// requests is how many chat and embedding requests srv has had.
func requests(srv *fake.Server) int { return len(srv.Chats()) + srv.EmbedCalls() }

// classify is the outcome of a stage's error.
func classify(err error) string {
	var me *model.Error
	switch {
	case err == nil:
		return "done"
	case errors.Is(err, agent.ErrServerConfig):
		return "error: " + err.Error()
	case errors.Is(err, agent.ErrFormat):
		return "format: " + err.Error()
	case errors.Is(err, trainer.ErrNoSignal):
		return "no signal: " + err.Error()
	case errors.Is(err, taskgen.ErrBadEmbedding):
		return "refused: " + err.Error()
	case model.IsOutage(err):
		// What the stage's caller records as infrastructure (a sketch
		// the diversity gate could not embed, a rerun gates it).
		return "infra: " + err.Error()
	case errors.Is(err, judge.ErrNoVerdict), errors.Is(err, agent.ErrInfra):
		return "infra: " + err.Error()
	case errors.As(err, &me):
		return "error: " + err.Error()
	case errors.Is(err, agent.ErrBudget):
		return "budget: " + err.Error()
	}
	return "error: " + err.Error()
}

func runAgentPath(tokenIDs bool) func(context.Context, *model.Client, string) string {
	return func(ctx context.Context, c *model.Client, home string) string {
		if tokenIDs {
			// The RL service refuses such an engine before any rollout.
			if err := c.Spec().Engine.Trainable(); err != nil {
				return "refused: " + err.Error()
			}
		}
		env := &agent.Env{Traj: &agent.Trajectory{Rollout: "matrix"}, Files: agent.HomeFiles{Dir: home, UID: os.Getuid(), GID: os.Getgid()}}
		h := &agent.Harness{Model: c, MaxTurns: 4, TokenIDs: tokenIDs}
		answer, err := h.Run(ctx, env, "What is the total in the file x?", "")
		if err == nil && strings.Contains(answer, "41") {
			return "error: the answer kept the reasoning: " + answer
		}
		if err == nil && tokenIDs {
			err = trainer.TokenSignal(env.Traj, c.Spec().String())
		}
		return classify(err)
	}
}

func runJudgePath(ctx context.Context, c *model.Client, _ string) string {
	j := &judge.LLMJudge{Model: c}
	t := &task.Task{ID: "matrix", Instruction: "Report the total in x.", Rubric: []string{"the answer is 42"}}
	tr := &agent.Trajectory{Answer: "42", Outcome: agent.OutcomeDone}
	_, _, err := j.Judge(ctx, t, tr, nil)
	return classify(err)
}

func runEmbeddingsPath(ctx context.Context, c *model.Client, _ string) string {
	d := &taskgen.Diversity{Embedder: c}
	a := taskgen.Sketch{Family: "f", Title: "Buy the dearest wish-list device", Core: []string{"order devices LD-1"}}
	b := taskgen.Sketch{Family: "g", Title: "Book the cheapest hotel night near the venue", Core: []string{"book stays H-2"}}
	for i, s := range []taskgen.Sketch{a, b} {
		v, err := d.Reserve(ctx, fmt.Sprint(i), "p", s)
		if err != nil {
			return classify(err)
		}
		if !v.Keep {
			return fmt.Sprintf("error: distinct sketches dropped as near-duplicates (similarity %.3f)", v.Similarity)
		}
	}
	return "done"
}

// noteWhere is where a note was said: the misbehaviours and the engines.
type noteWhere struct{ misbehaviours, engines []string }

func (n *noteWhere) add(m, engine string) {
	if !slices.Contains(n.misbehaviours, m) {
		n.misbehaviours = append(n.misbehaviours, m)
	}
	if !slices.Contains(n.engines, engine) {
		n.engines = append(n.engines, engine)
	}
}

// describe says where, of a table of rows misbehaviours.
func (n *noteWhere) describe(rows int) string {
	ms := strings.Join(n.misbehaviours, "; ")
	if len(n.misbehaviours) == rows {
		ms = "every row"
	}
	return ms + " on " + strings.Join(n.engines, ", ")
}
