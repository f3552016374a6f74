package openenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/world"
)

// PoolTools returns the tools of every episode the server may run: the
// union, by name, of the tools of one instance of each distinct initial
// world among its tasks (started, listed and torn down), in the order a
// reset shows them. A name two worlds give different definitions is an
// error naming both tasks: one method cannot stand for both.
func (s *Server) PoolTools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	from := map[string]string{} // tool name -> the task it was listed for
	seen := map[world.ID]bool{}
	for _, t := range s.order {
		w := t.Task.Provenance.Snapshot
		if seen[w] {
			continue
		}
		seen[w] = true
		defs, err := s.worldTools(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("openenv: the tools of task %s: %w", t.Task.ID, err)
		}
		for _, tl := range toolsOf(defs) {
			i := slices.IndexFunc(out, func(o Tool) bool { return o.Name == tl.Name })
			if i < 0 {
				out = append(out, tl)
				from[tl.Name] = t.Task.ID
				continue
			}
			if o := out[i]; o.Description != tl.Description || !bytes.Equal(o.Parameters, tl.Parameters) {
				return nil, fmt.Errorf("openenv: tool %s differs between the worlds of tasks %s and %s: serve their splits apart (pool split) so that each class has one definition", tl.Name, from[tl.Name], t.Task.ID)
			}
		}
	}
	return out, nil
}

func (s *Server) worldTools(ctx context.Context, t Task) ([]agent.ToolDef, error) {
	env, err := s.opts.Env(t.Task)
	if err != nil {
		return nil, err
	}
	inst, err := env.Start(ctx, t.Task.Provenance.Snapshot, "openenv-tools-"+randomID()[:8])
	if err != nil {
		return nil, fmt.Errorf("start its initial world: %w", err)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	sess, err := env.Open(ctx, inst, &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.Task.ID, Policy: "openenv-tools", Start: t.Task.Provenance.Snapshot})
	if err != nil {
		return nil, fmt.Errorf("open a session: %w", err)
	}
	defer sess.Close(context.WithoutCancel(ctx))
	return sess.Env.Tools(ctx)
}

// TRLOptions configure WriteTRL. The zero value of each field means its
// default.
type TRLOptions struct {
	// Class is the environment class's name (default WildawmEnv).
	Class string
	// URL is the server's base URL the module defaults to (default
	// http://127.0.0.1:8010); WILDAWM_OPENENV_URL overrides it at run time.
	URL string
	// Source says what the module was generated from (a comment).
	Source string
}

var (
	pyIdent    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	pyKeywords = []string{"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match", "case", "type", "self"}
	// reserved are the names TRL's GRPOTrainer does not expose as tools
	// (reset, get_reward) and the class's own.
	pyReserved = []string{"reset", "get_reward"}
)

// pyName turns a tool or argument name into a Python identifier: '-' and
// other characters become '_', a leading digit gets a 't_', a keyword a
// trailing '_'.
func pyName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	n := string(b)
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "t_" + n
	}
	if slices.Contains(pyKeywords, n) {
		n += "_"
	}
	return n
}

// pyDoc makes text safe and single-line inside a generated docstring:
// whitespace collapsed, backslashes and quotes escaped, and the section
// headers TRL's schema parser splits on (Args:, Returns:, Raises:) kept
// from reading as headers.
func pyDoc(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "Args:", "Args -", "Returns:", "Returns -", "Raises:", "Raises -").Replace(s)
	return s
}

// param is one argument of a generated method.
type param struct {
	name, py, typ, doc string
	required           bool
}

// pyType maps a JSON Schema property to the Python type hint TRL (through
// transformers' get_json_schema) turns back into a schema.
func pyType(p map[string]any) string {
	t, _ := p["type"].(string)
	if t == "" {
		for _, k := range []string{"anyOf", "oneOf"} {
			opts, _ := p[k].([]any)
			for _, o := range opts {
				if m, ok := o.(map[string]any); ok && m["type"] != "null" && m["type"] != nil {
					return pyType(m)
				}
			}
		}
	}
	switch t {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		if items, ok := p["items"].(map[string]any); ok {
			return "list[" + pyType(items) + "]"
		}
		return "list"
	case "object":
		return "dict"
	}
	return "str"
}

// params reads a tool's input schema into method arguments, required
// first (Python's order), each in the schema's property order.
func params(tool Tool) ([]param, error) {
	var schema struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", tool.Name, err)
	}
	names, props, err := orderedProps(schema.Properties)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema properties: %w", tool.Name, err)
	}
	var req, opt []param
	used := map[string]string{}
	for _, n := range names {
		p := props[n]
		py := pyName(n)
		if other, dup := used[py]; dup {
			return nil, fmt.Errorf("tool %s: arguments %q and %q are both %s in Python", tool.Name, other, n, py)
		}
		used[py] = n
		doc, _ := p["description"].(string)
		if doc == "" {
			doc, _ = p["title"].(string)
		}
		if doc == "" {
			doc = "the " + n
		}
		doc = pyDoc(doc)
		if enum, ok := p["enum"].([]any); ok && pyType(p) == "str" {
			if b, err := json.Marshal(enum); err == nil {
				doc += " (choices: " + strings.ReplaceAll(string(b), `"`, `\"`) + ")"
			}
		}
		a := param{name: n, py: py, typ: pyType(p), doc: doc, required: slices.Contains(schema.Required, n)}
		if a.required {
			req = append(req, a)
		} else {
			opt = append(opt, a)
		}
	}
	return append(req, opt...), nil
}

// orderedProps decodes a JSON object's members in their order.
func orderedProps(raw json.RawMessage) ([]string, map[string]map[string]any, error) {
	props := map[string]map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, props, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := tok.(string)
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k, err)
		}
		names = append(names, k)
		props[k] = v
	}
	return names, props, nil
}

// WriteTRL writes a Python module (standard library only) with an
// environment class for TRL's GRPOTrainer(environment_factory=...): one
// fixed method per tool (its arguments typed and described in a Google
// docstring, from which TRL builds the schema the model sees), reset and
// get_reward, talking to a wildawm OpenEnv server over HTTP /mcp
// (docs/openenv.md, "TRL").
func WriteTRL(w io.Writer, tools []Tool, o TRLOptions) error {
	if o.Class == "" {
		o.Class = "WildawmEnv"
	}
	if o.URL == "" {
		o.URL = "http://127.0.0.1:8010"
	}
	if !pyIdent.MatchString(o.Class) || slices.Contains(pyKeywords, o.Class) {
		return fmt.Errorf("openenv: class name %q is not a Python identifier", o.Class)
	}
	if len(tools) == 0 {
		return errors.New("openenv: no tools to write methods for")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, trlHeader, pyDoc(o.Source), strconv.Quote(o.URL), o.Class)
	methods := map[string]string{}
	for _, t := range tools {
		m := pyName(t.Name)
		if strings.HasPrefix(m, "_") || slices.Contains(pyReserved, m) {
			return fmt.Errorf("openenv: tool %s: its method %s would not be a tool to TRL (reserved, or private with a leading _)", t.Name, m)
		}
		if other, dup := methods[m]; dup {
			return fmt.Errorf("openenv: tools %s and %s are both the method %s", other, t.Name, m)
		}
		methods[m] = t.Name
		ps, err := params(t)
		if err != nil {
			return fmt.Errorf("openenv: %w", err)
		}
		sig := []string{"self"}
		for _, p := range ps {
			if p.required {
				sig = append(sig, p.py+": "+p.typ)
			} else {
				sig = append(sig, p.py+": Optional["+p.typ+"] = None")
			}
		}
		desc := pyDoc(t.Description)
		if desc == "" {
			desc = "Call the " + pyDoc(t.Name) + " tool."
		}
		fmt.Fprintf(&b, "\n    def %s(%s) -> str:\n        \"\"\"%s\n", m, strings.Join(sig, ", "), desc)
		if len(ps) > 0 {
			b.WriteString("\n        Args:\n")
			for _, p := range ps {
				fmt.Fprintf(&b, "            %s: %s\n", p.py, p.doc)
			}
		}
		b.WriteString("\n        Returns:\n            What the tool shows: its output, or why it failed.\n        \"\"\"\n")
		args := make([]string, len(ps))
		for i, p := range ps {
			args[i] = strconv.Quote(p.name) + ": " + p.py
		}
		fmt.Fprintf(&b, "        return self._call(%s, {%s})\n", strconv.Quote(t.Name), strings.Join(args, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// trlHeader is the module up to the tool methods: %s the source, %s the
// default URL (a Python string literal), %s the class name.
const trlHeader = `"""A wildawm OpenEnv environment for TRL's GRPOTrainer(environment_factory=...).

Generated by wildawm openenv trl-env (%s); regenerate it rather than edit it.
Standard library only. It talks to wildawm openenv serve over HTTP POST /mcp
(JSON-RPC: openenv/session/create, wildawm/reset, tools/call,
openenv/session/close); docs/openenv.md, "TRL", is the contract.

    from trl import GRPOConfig, GRPOTrainer
    from wildawm_env import WildawmEnv

    trainer = GRPOTrainer(model=..., args=GRPOConfig(max_steps=...),
                          train_dataset=dataset,  # optional: a task_id column picks each task
                          environment_factory=WildawmEnv)

Each instance holds one server session (openenv serve --max-sessions must
cover the instances TRL makes: one per concurrent rollout). reset(**row)
starts the task the row's task_id names (or, without one, the server's next
or the row's seed) and returns its instruction; every other column is
dropped by the server. The tool methods are the pool's tools; answer ends the
episode, which the server verifies. get_reward returns the paper's reward
(rl.Reward); an episode the model left without calling answer is ended with
an empty answer first, as the step budget ends one.
"""

import json
import os
import urllib.error
import urllib.request
from typing import Optional

DEFAULT_URL = os.environ.get("WILDAWM_OPENENV_URL", %s)


class WildawmError(RuntimeError):
    """The server refused a request, or could not be reached."""


class %s:
    def __init__(self, url: Optional[str] = None, timeout: float = 900.0):
        self._url = (url or DEFAULT_URL).rstrip("/") + "/mcp"
        self._timeout = timeout
        self._token = os.environ.get("WILDAWM_OPENENV_TOKEN", "")
        self._session = None
        self._id = 0
        self.task_id = None
        self.done = False
        self.reward = None
        self.verification = None
        self.steps = 0
        self.ignored_reset_keys = []

    # TRL's reserved methods.

    def reset(self, **kwargs) -> str:
        """Start a fresh episode and return the task's instruction."""
        params = {k: v for k, v in kwargs.items() if v is not None}
        try:
            res = self._rpc("wildawm/reset", params, session=True)
        except WildawmError as e:
            if "Unknown session_id" not in str(e):
                raise
            self._session = None  # idled out on the server: a new one
            res = self._rpc("wildawm/reset", params, session=True)
        obs = res["observation"]
        self.task_id = obs["task"]["id"]
        self.done, self.reward, self.verification, self.steps = False, None, None, 0
        self.ignored_reset_keys = res.get("metadata", {}).get("ignored_reset_keys", [])
        text = obs["task"]["instruction"]
        if obs["task"].get("hint"):
            text += "\n\nHint: " + obs["task"]["hint"]
        return text + "\n\nWhen the task is done, call answer with your final answer (empty when the task asks for none)."

    def get_reward(self) -> float:
        """The episode's reward, once verified."""
        if self._session is None or self.task_id is None:
            raise WildawmError("get_reward before reset: no episode")
        if not self.done:
            self._call("answer", {"text": ""})
        if self.reward is None:
            raise WildawmError(f"episode of {self.task_id} ended without a reward")
        return float(self.reward)

    # Plumbing, private so that TRL does not take it for tools.

    def _rpc(self, method, params, session=False):
        if session:
            if self._session is None:
                self._session = self._rpc("openenv/session/create", {})["session_id"]
            params = dict(params, session_id=self._session)
        self._id += 1
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": self._id}, default=str).encode()
        req = urllib.request.Request(self._url, data=body, headers={"Content-Type": "application/json"})
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                out = json.load(resp)
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise WildawmError(f"{method}: {self._url}: {e}") from e
        if out.get("error"):
            raise WildawmError(f"{method}: {out['error'].get('message')}")
        return out["result"]

    def _call(self, tool, args):
        if self.done:
            raise WildawmError(f"the episode is over ({self.task_id}): no more tool calls")
        res = self._rpc("tools/call", {"name": tool, "arguments": {k: v for k, v in args.items() if v is not None}}, session=True)
        meta = res.get("meta") or {}
        self.steps = meta.get("step", self.steps)
        if meta.get("done"):
            self.done, self.reward, self.verification = True, meta.get("reward"), meta.get("verification")
        return res.get("data", "")

    def _close(self):
        if self._session is not None:
            try:
                self._rpc("openenv/session/close", {"session_id": self._session})
            finally:
                self._session = None

    def __del__(self):
        try:
            self._close()
        except Exception:
            pass

    # The pool's tools.
`
