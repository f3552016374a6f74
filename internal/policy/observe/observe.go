package observe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/task"
)

// Name is the policy's name in trajectories and the service's registry.
const Name = "learned:observe"

// Policy is the observation-driven learnable policy (docs/rl.md): at each
// action it chooses, by a log-linear softmax over hashed features, one of
// the actions the rollout's observations offer, through the harness's own
// tools as a model calls them. It is given the task's public part only.
type Policy struct {
	Model *Model
	// Version names the parameters (the turns' weight version).
	Version    string
	MaxActions int
	Seed       uint64
}

// New is the policy with params (empty: DefaultParams) and its rollout's
// seed.
func New(params json.RawMessage, seed uint64) (*Policy, error) {
	p, m, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	return &Policy{Model: m, Version: p.Version, MaxActions: cmpOr(p.MaxActions, DefaultMaxActions), Seed: seed}, nil
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Name implements rollout.Policy.
func (p *Policy) Name() string { return Name }

// The kinds of action, the first decision of each.
const (
	KindNav    = "nav"    // open a website's start page
	KindLink   = "link"   // click a link of the page
	KindButton = "button" // click a button of the page
	KindForm   = "form"   // type a value (or keep it) into each field of a form, then click its button
	KindBack   = "back"   // the browser's back
	KindMCP    = "mcp"    // call an MCP tool with arguments from the values seen
	KindShell  = "shell"  // list the home's files, or print one it listed
	KindStop   = "stop"   // finish
)

// state is one rollout's memory: what it has seen.
type state struct {
	p     *Policy
	env   *agent.Env
	rng   *rand.Rand
	instr []string // the instruction's words
	text  string   // the instruction and hint
	tools []agent.ToolDef
	page  *Page
	site  string // the current page's site
	// values seen, newest last; files listed; actions and pages done.
	values  []Value
	files   []string
	done    map[string]bool
	visited map[string]bool
	used    map[string]bool
	prev    string
	held    []int
	first   []int // the turn index each action's segment starts at
}

// Run implements rollout.Policy.
func (p *Policy) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	h := fnv.New64a()
	fmt.Fprintf(h, "observe\x00%s\x00%d", t.ID, p.Seed)
	s := &state{p: p, env: env, rng: rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15)), text: t.Instruction + "\n" + t.Hint,
		done: map[string]bool{}, visited: map[string]bool{}, used: map[string]bool{}, prev: "start"}
	s.instr = words(s.text)
	s.values = TextValues(s.text, SrcInstruction)
	defer s.segments()
	tools, err := env.Tools(ctx)
	if err != nil {
		return "", err
	}
	for _, td := range tools {
		if td.Interface == agent.MCP {
			s.tools = append(s.tools, td)
		}
	}
	for range p.MaxActions {
		stop, err := s.act(ctx)
		if err != nil {
			return "", err
		}
		if stop {
			break
		}
	}
	return "Done.", nil
}

// segments marks each action's turns as a segment of its own: the policy
// keeps no context beyond the features of the decision at hand, so every
// action starts from a fresh context, where a compaction would cut.
func (s *state) segments() {
	turns := s.env.Traj.Turns
	s.env.Traj.Segments = nil
	for i, f := range s.first {
		last := len(turns)
		if i+1 < len(s.first) {
			last = s.first[i+1] - 1
		}
		if last < f {
			continue
		}
		reason := "compaction"
		if len(s.env.Traj.Segments) == 0 {
			reason = "start"
		}
		s.env.Traj.Segments = append(s.env.Traj.Segments, agent.Segment{Index: len(s.env.Traj.Segments), FirstTurn: f, LastTurn: last, Reason: reason})
	}
	for i := range turns {
		for j, sg := range s.env.Traj.Segments {
			if turns[i].Index >= sg.FirstTurn && turns[i].Index <= sg.LastTurn {
				turns[i].Segment = j
			}
		}
	}
}

// decide draws one of cands (each a list of feature names) and records the
// decision as a turn; label names the choice in the turn's content. One
// candidate is taken without a turn (nothing to learn).
func (s *state) decide(cands [][]string, label func(int) string) int {
	if len(cands) == 1 {
		return 0
	}
	if len(cands) > MaxCandidates {
		cands = cands[:MaxCandidates]
	}
	dim := s.p.Model.Dim()
	prompt := append(slices.Clone(s.held), TokDecide)
	hashed := make([][]int, len(cands))
	for i, fs := range cands {
		prompt = append(prompt, TokCand)
		for _, f := range fs {
			k := hash(f, dim)
			hashed[i] = append(hashed[i], k)
			prompt = append(prompt, FeatureToken(k))
		}
	}
	a, lp := s.p.Model.sample(hashed, s.rng)
	env := s.env
	env.Traj.Turns = append(env.Traj.Turns, agent.Turn{Index: len(env.Traj.Turns) + 1, Kind: "act", Messages: 1, Content: label(a),
		FinishReason: "stop", PromptTokens: len(prompt), CompletionTokens: 1, PromptTokenIDs: prompt,
		CompletionTokenIDs: []int{ChoiceToken(a)}, Logprobs: []float64{lp}, WeightVersion: s.p.Version})
	s.held = append(prompt, ChoiceToken(a))
	return a
}

// cues describe the page for the kind decision.
func (s *state) cue() string {
	switch {
	case s.page == nil:
		return "nopage"
	case slices.ContainsFunc(s.page.Elements, func(e Element) bool { return e.Password }):
		return "pw"
	case slices.ContainsFunc(s.page.Text, func(t string) bool { return strings.HasPrefix(t, "Signed in") }):
		return "in"
	}
	return "page"
}

func (s *state) itemFeats(kind string, ws []string, key string) []string {
	fs := []string{"i:" + kind}
	for _, w := range ws[:min(len(ws), 5)] {
		fs = append(fs, "w:"+kind+":"+w)
	}
	ov := 0
	for _, w := range ws {
		if slices.Contains(s.instr, w) {
			ov++
		}
	}
	if ov > 0 {
		fs = append(fs, "ov"+strconv.Itoa(min(ov, 3)))
	}
	if s.done[key] {
		fs = append(fs, "rep")
	}
	return fs
}

// act chooses and takes one action; stop says the policy finished.
func (s *state) act(ctx context.Context) (bool, error) {
	s.held = []int{TokBOS}
	s.first = append(s.first, len(s.env.Traj.Turns)+1)
	var kinds []string
	if len(s.env.Sites) > 0 {
		kinds = append(kinds, KindNav)
	}
	var links, buttons []Element
	var forms []Form
	if s.page != nil {
		for _, e := range s.page.Elements {
			switch e.Role {
			case "link":
				links = append(links, e)
			case "button":
				buttons = append(buttons, e)
			}
		}
		forms = s.page.Forms()
		for k, n := range map[string]int{KindLink: len(links), KindButton: len(buttons), KindForm: len(forms)} {
			if n > 0 {
				kinds = append(kinds, k)
			}
		}
		kinds = append(kinds, KindBack)
	}
	if len(s.tools) > 0 {
		kinds = append(kinds, KindMCP)
	}
	kinds = append(kinds, KindShell, KindStop)
	slices.Sort(kinds)
	cue, bucket := s.cue(), strconv.Itoa(min(len(s.first)/4, 5))
	var cands [][]string
	for _, k := range kinds {
		cands = append(cands, []string{"k:" + k, "k:" + k + "|p:" + s.prev, "k:" + k + "|c:" + cue, "k:" + k + "|t:" + bucket})
	}
	kind := kinds[s.decide(cands, func(i int) string { return "kind " + kinds[i] })]
	s.prev = kind
	switch kind {
	case KindStop:
		return true, nil
	case KindBack:
		return false, s.gui(ctx, "back", "browser_back", map[string]any{})
	case KindNav:
		names := slices.Sorted(maps.Keys(s.env.Sites))
		cands = cands[:0]
		for _, n := range names {
			fs := s.itemFeats(KindNav, words(n), "nav "+n)
			if s.visited[s.env.Sites[n]+"/"] {
				fs = append(fs, "visited")
			}
			cands = append(cands, fs)
		}
		n := names[s.decide(cands, func(i int) string { return "open " + names[i] })]
		return false, s.gui(ctx, "nav "+n, "browser_navigate", map[string]any{"url": s.env.Sites[n] + "/"})
	case KindLink:
		cands = cands[:0]
		for _, e := range links {
			fs := s.itemFeats(KindLink, words(e.Name+" "+hrefWords(e.Href)), "link "+e.Href)
			if s.visited[s.abs(e.Href)] {
				fs = append(fs, "visited")
			}
			cands = append(cands, fs)
		}
		e := links[s.decide(cands, func(i int) string { return fmt.Sprintf("click [%d] %s", links[i].Ref, links[i].Name) })]
		return false, s.gui(ctx, "link "+e.Href, "browser_click", map[string]any{"ref": e.Ref})
	case KindButton:
		cands = cands[:0]
		for _, e := range buttons {
			cands = append(cands, s.itemFeats(KindButton, words(e.Name), "button "+s.pagePath()+" "+e.Name))
		}
		e := buttons[s.decide(cands, func(i int) string { return fmt.Sprintf("click [%d] %s", buttons[i].Ref, buttons[i].Name) })]
		return false, s.gui(ctx, "button "+s.pagePath()+" "+e.Name, "browser_click", map[string]any{"ref": e.Ref})
	case KindForm:
		return false, s.form(ctx, forms)
	case KindMCP:
		return false, s.mcp(ctx)
	default:
		return false, s.shell(ctx)
	}
}

// form fills a form of the page and clicks its button.
func (s *state) form(ctx context.Context, forms []Form) error {
	var cands [][]string
	for _, f := range forms {
		ws := words(f.Button.Name)
		for _, e := range f.Fields {
			ws = append(ws, words(e.Name)...)
		}
		fs := s.itemFeats(KindForm, ws, "form "+s.pagePath()+" "+f.Button.Name)
		if slices.ContainsFunc(f.Fields, func(e Element) bool { return e.Password }) {
			fs = append(fs, "form:pw")
		}
		cands = append(cands, fs)
	}
	f := forms[s.decide(cands, func(i int) string { return "form " + forms[i].Button.Name })]
	for _, e := range f.Fields {
		v, ok := s.value(words(e.Name), "string", e.Value != "" || e.Role == "searchbox")
		if !ok {
			continue
		}
		if _, err := s.env.Call(ctx, "browser_type", mustJSON(map[string]any{"ref": e.Ref, "text": v})); err != nil && fatal(ctx, err) {
			return err
		}
	}
	return s.gui(ctx, "form "+s.pagePath()+" "+f.Button.Name, "browser_click", map[string]any{"ref": f.Button.Ref})
}

// value chooses a value for a field named by field words, of JSON type
// typ; keep offers leaving it as it is (ok false).
func (s *state) value(field []string, typ string, keep bool) (string, bool) {
	field = field[:min(len(field), 3)]
	var vals []Value
	seen := map[string]bool{}
	// The instruction's values and the newest others, newest first.
	for i := len(s.values) - 1; i >= 0 && len(vals) < 48; i-- {
		v := s.values[i]
		if seen[v.Text] || typ == "integer" && !isInt(v.Text) {
			continue
		}
		seen[v.Text] = true
		vals = append(vals, v)
	}
	var cands [][]string
	if keep {
		fs := []string{"keep"}
		for _, f := range field {
			fs = append(fs, "keep|"+f)
		}
		cands = append(cands, fs)
	}
	for _, v := range vals {
		fs := []string{"v:" + v.Source, "vshape:" + shape(v.Text)}
		match := false
		for _, f := range field {
			fs = append(fs, "vf:"+v.Source+"|"+f, "vshape:"+shape(v.Text)+"|"+f)
			for _, c := range v.Ctx[:min(len(v.Ctx), 3)] {
				fs = append(fs, "vc:"+c+"|"+f)
				if len(c) >= 4 && len(f) >= 4 && c[:4] == f[:4] {
					match = true
				}
			}
		}
		if match {
			fs = append(fs, "vmatch")
		}
		if s.site != "" && slices.Contains(v.Ctx, s.site) {
			fs = append(fs, "vsite")
		}
		if strings.Contains(s.text, v.Text) {
			fs = append(fs, "vinstr")
		}
		if s.used[v.Text] {
			fs = append(fs, "vused")
		}
		cands = append(cands, fs)
	}
	if len(cands) == 0 {
		return "", false
	}
	i := s.decide(cands, func(i int) string {
		if keep && i == 0 {
			return "keep " + strings.Join(field, " ")
		}
		return "value " + vals[i-b2i(keep)].Text
	})
	if keep && i == 0 {
		return "", false
	}
	v := vals[i-b2i(keep)].Text
	s.used[v] = true
	return v, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var intRE = regexp.MustCompile(`^-?\d{1,9}$`)

func isInt(s string) bool { return intRE.MatchString(s) }

// shape is a value's form: letters a, digits 9, other runes kept, runs
// collapsed ("marta.costa" is "a.a", "LD-0234" "A-9").
func shape(v string) string {
	var b strings.Builder
	last := rune(0)
	for _, r := range v {
		c := r
		switch {
		case r >= 'a' && r <= 'z':
			c = 'a'
		case r >= 'A' && r <= 'Z':
			c = 'A'
		case r >= '0' && r <= '9':
			c = '9'
		}
		if c != last {
			b.WriteRune(c)
		}
		last = c
		if b.Len() > 12 {
			break
		}
	}
	return b.String()
}

// mcp chooses a tool and its arguments.
func (s *state) mcp(ctx context.Context) error {
	var cands [][]string
	for _, td := range s.tools {
		svc, tool, _ := strings.Cut(td.Name, agent.ToolSep)
		verb, _, _ := strings.Cut(tool, "_")
		fs := s.itemFeats(KindMCP, words(svc+" "+strings.ReplaceAll(tool, "_", " ")), "mcp "+td.Name)
		cands = append(cands, append(fs, "tool:"+td.Name, "verb:"+verb))
	}
	td := s.tools[s.decide(cands, func(i int) string { return "call " + s.tools[i].Name })]
	var schema struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
			Items       *struct {
				Type string `json:"type"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(td.Parameters, &schema)
	args := map[string]any{}
	optional := 0
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		prop := schema.Properties[name]
		req := slices.Contains(schema.Required, name)
		if !req && (optional >= 3 || name == "cursor") {
			continue
		}
		typ := prop.Type
		if typ == "array" && prop.Items != nil && prop.Items.Type == "string" {
			typ = "string"
		} else if typ != "string" && typ != "integer" {
			continue
		}
		if !req {
			optional++
		}
		field := append(words(strings.ReplaceAll(name, "_", " ")), words(prop.Description)...)
		v, ok := s.value(field, typ, !req)
		if !ok {
			continue
		}
		switch {
		case prop.Type == "array":
			args[name] = []string{v}
		case typ == "integer":
			n, _ := strconv.Atoi(v)
			args[name] = n
		default:
			args[name] = v
		}
	}
	key := "mcp " + td.Name
	s.done[key] = true
	obs, err := s.env.Call(ctx, td.Name, mustJSON(args))
	if err != nil {
		if fatal(ctx, err) {
			return err
		}
		return nil
	}
	s.see(JSONValues(obs, SrcMCP))
	return nil
}

// shell lists the home's files or prints one of those listed.
func (s *state) shell(ctx context.Context) error {
	cmds := []string{"ls -R"}
	for _, f := range s.files {
		cmds = append(cmds, "cat "+f)
	}
	var cands [][]string
	for _, c := range cmds {
		verb, arg, _ := strings.Cut(c, " ")
		ws := words(arg)
		if verb == "cat" {
			ws = words(strings.ReplaceAll(strings.ReplaceAll(arg, "/", " "), ".", " "))
		}
		fs := s.itemFeats(KindShell+":"+verb, ws, "shell "+c)
		if i := strings.LastIndexByte(arg, '.'); verb == "cat" && i >= 0 {
			fs = append(fs, "ext:"+arg[i+1:])
		}
		cands = append(cands, fs)
	}
	c := cmds[s.decide(cands, func(i int) string { return "shell " + cmds[i] })]
	s.done["shell "+c] = true
	obs, err := s.env.Call(ctx, "shell", mustJSON(map[string]any{"command": c}))
	if err != nil {
		if fatal(ctx, err) {
			return err
		}
		return nil
	}
	if c == "ls -R" {
		for _, f := range listed(obs) {
			if !slices.Contains(s.files, f) {
				s.files = append(s.files, f)
			}
		}
		return nil
	}
	s.see(TextValues(obs, SrcShell))
	return nil
}

// listed are the text files of an ls -R listing.
func listed(out string) []string {
	var files []string
	dir := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(line, ":"):
			dir = strings.TrimPrefix(strings.TrimSuffix(line, ":"), ".")
			dir = strings.TrimPrefix(dir, "/")
		case line == "":
		default:
			if i := strings.LastIndexByte(line, '.'); i > 0 && slices.Contains([]string{"md", "txt", "csv", "json"}, line[i+1:]) {
				p := line
				if dir != "" {
					p = dir + "/" + line
				}
				files = append(files, p)
			}
		}
	}
	return files
}

// gui runs a browser tool and reads the page it returns.
func (s *state) gui(ctx context.Context, key, tool string, args map[string]any) error {
	s.done[key] = true
	obs, err := s.env.Call(ctx, tool, mustJSON(args))
	if err != nil {
		if fatal(ctx, err) {
			return err
		}
		return nil
	}
	if !strings.HasPrefix(obs, "URL: ") {
		return nil
	}
	s.page = ParsePage(obs)
	s.visited[s.page.URL] = true
	s.site = ""
	for name, base := range s.env.Sites {
		if strings.HasPrefix(s.page.URL, base) {
			s.site = name
		}
	}
	vals := PageValues(s.page, s.site)
	if t, _, _ := strings.Cut(s.page.Title, " · "); t != "" {
		vals = append(vals, Value{Text: t, Source: SrcPage, Ctx: []string{"title", s.site}})
	}
	s.see(vals)
	return nil
}

// see adds values, newest last, keeping the newest 200 besides the
// instruction's.
func (s *state) see(vals []Value) {
	s.values = append(s.values, vals...)
	if n := len(s.values); n > 400 {
		var keep []Value
		for _, v := range s.values[:n-200] {
			if v.Source == SrcInstruction {
				keep = append(keep, v)
			}
		}
		s.values = append(keep, s.values[n-200:]...)
	}
}

func (s *state) pagePath() string {
	if s.page == nil {
		return ""
	}
	if u, err := url.Parse(s.page.URL); err == nil {
		return s.site + u.Path
	}
	return s.page.URL
}

// abs is the address a link of the current page opens.
func (s *state) abs(href string) string {
	if s.page == nil {
		return href
	}
	base, err := url.Parse(s.page.URL)
	if err != nil {
		return href
	}
	ref, err := url.Parse(href)
	if err != nil {
		return href
	}
	return base.ResolveReference(ref).String()
}

func hrefWords(href string) string {
	return strings.NewReplacer("/", " ", "?", " ", "=", " ", "&", " ", "-", " ").Replace(href)
}

// fatal says whether a tool's error ends the rollout: the harness's
// failure or the rollout's end; anything else is an observation.
func fatal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, agent.ErrInfra) || errors.Is(err, agent.ErrFormat)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
