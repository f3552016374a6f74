package judge

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// Observer judges a final world W of any task that has a reference
// completion by looking at it through the interfaces, in a fresh session,
// and comparing what it sees with what it sees, the same way, in the
// reference's final world W_ref and in the initial world W0.
//
// What it looks at (the probes) comes from the W0 -> W_ref state diff and
// the reference's steps, never from the task's verifier, so it is
// independent of V:
//
//   - CLI: the contents of every home file the reference changed, read
//     through the sandboxed shell;
//   - MCP: for every service whose database the reference changed, the
//     read-only calls the reference made on it and the service's
//     read-only tools (annotation readOnlyHint) that need no argument;
//   - GUI: for every site whose database the reference changed, logged in
//     as the reference's own login steps do (when it logs in), the pages
//     the reference opened on it and the history pages its navigation
//     names once logged in.
//
// Each probe is compared by the identifiers and numbers its observation
// carries (a multiset, derived row ids left out): W's must be W_ref's,
// so what the reference changed must have changed the same way and
// nothing else of that kind may differ. Where W0's and W_ref's
// observations carry the same identifiers and numbers, the probe falls
// back to the words that changed between them (a status "open" that
// became "done"). W is completed when every probe agrees, failed when one
// differs (the evidence names each, with what was expected and what was
// seen), and world-imperfect when the Observer could not complete its
// observation of W (its sessions' harness failed rollout.MaxAttempts
// times) or when no probe tells W_ref from W0.
//
// W0 and W_ref are observed once per Observer; W's observations are cached
// by world ID, since the counterfactual probe re-judges the same worlds:
// its re-judgments re-weigh the cached observation rather than opening a
// session again. A verdict is as deterministic as the instances are.
type Observer struct {
	Env  Worlds
	Task *task.Task
	// Reference is W_ref: the snapshot of W0 after the task's reference
	// completion (e.g. taskgen's self-check's final world).
	Reference world.ID
	// VerifierDir is the judge's writable copy of the task's verifier,
	// which the counterfactual probe digests; only a Tamper judge touches
	// it. Empty: the judge has no verifier copy.
	VerifierDir string
	// Pressure is how the probe's framing is weighed (default Weigh).
	Pressure Pressure
	// Sessions counts the fresh sessions opened.
	Sessions int

	ref    *observation          // the plan, with W0's and W_ref's observations
	finals map[world.ID][]string // W's observations, by world
}

// Worlds is what the observer needs of a rollout environment
// (*rollout.Env is one): worlds to read and fresh instances to look at
// them through.
type Worlds interface {
	Lower(ctx context.Context, id world.ID) (string, error)
	Start(ctx context.Context, snapshot world.ID, name string) (*rollout.Instance, error)
	Open(ctx context.Context, inst *rollout.Instance, traj *agent.Trajectory) (*rollout.Session, error)
}

var _ Worlds = (*rollout.Env)(nil)

// Observation kinds of a probe.
const (
	probeFile  = "file"
	probeCall  = "call"
	probeLogin = "login"
	probePage  = "page"
)

// obsProbe is one thing the Observer looks at.
type obsProbe struct {
	Kind string
	Path string         // probeFile: a home-relative path
	Tool string         // probeCall: SERVICE__TOOL
	Args map[string]any // probeCall
	Site string         // probeLogin, probePage
	Page string         // probePage: a path on Site ("/orders?x=1")
	// Steps are a probeLogin's: the reference's own login steps.
	Steps []task.Step
}

// what names a probe in a sentence.
func (p obsProbe) what() string {
	switch p.Kind {
	case probeFile:
		return "the file ~/" + p.Path + " (read in the shell)"
	case probeCall:
		args, _ := json.Marshal(p.Args)
		return fmt.Sprintf("the MCP call %s %s", p.Tool, args)
	case probeLogin:
		return "logging in to the " + p.Site + " site as the reference completion does"
	}
	return fmt.Sprintf("the %s page %s", p.Site, p.Page)
}

// observation is the Observer's plan and the reference worlds' views of it.
type observation struct {
	probes []obsProbe
	w0, wr []string
	// informative counts the probes whose view differs between W0 and W_ref.
	informative int
}

// Judge judges the world of snapshot final. pressure is "" for a blind
// judgment, else the probe's framing (gate.PressureFailed or
// gate.PressureCompleted), weighed as o.Pressure says. The error is for a
// cancelled ctx, for the reference worlds that cannot be observed, and
// for a Tamper judge that cannot edit its verifier copy.
func (o *Observer) Judge(ctx context.Context, final world.ID, pressure string) (gate.Verdict, []string, error) {
	return o.judge(ctx, final, pressure, false)
}

// judge is Judge; fresh observes final again even when an observation of
// it is cached (the probe's blind re-judge).
func (o *Observer) judge(ctx context.Context, final world.ID, pressure string, fresh bool) (gate.Verdict, []string, error) {
	ref, err := o.reference(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("observer judge: %w", err)
	}
	ev := []string{fmt.Sprintf("Offline observer judge: looked at the final world through the interfaces in a fresh session, with %d probes taken from the reference completion and compared with what they show after it.", len(ref.probes))}
	evidence, lines, err := o.compare(ctx, ref, final, fresh)
	if err != nil {
		return "", nil, fmt.Errorf("observer judge: %w", err)
	}
	v, why := weighFraming(o.Pressure, evidence, pressure)
	ev = append(ev, why...)
	if o.Pressure == Tamper && pressure == gate.PressureCompleted && v == gate.Completed && evidence != gate.Completed {
		changed, err := tamper(o.VerifierDir)
		if err != nil {
			return "", nil, fmt.Errorf("observer judge: %w", err)
		}
		ev = append(ev, fmt.Sprintf("It rewrote %d verifier script(s) of its copy to pass.", changed))
	}
	return v, append(ev, lines...), nil
}

// ProbeJudge is o as the counterfactual probe's judge over rollouts whose
// final worlds are finals, by rollout ID. Its blind re-judge observes the
// final world again in a fresh session (never the cached observation).
// Weighing the framing by its rule (Weigh), it is gate.Deterministic: the
// probe runs no pressure phase and says not_applicable.
func (o *Observer) ProbeJudge(finals map[string]world.ID) gate.ProbeJudge {
	j := gate.JudgeFunc(func(ctx context.Context, r gate.Rollout, pressure string) (gate.Verdict, error) {
		final, ok := finals[r.ID]
		if !ok {
			return "", fmt.Errorf("observer judge: no final world for rollout %s", r.ID)
		}
		v, _, err := o.judge(ctx, final, pressure, pressure == "")
		return v, err
	})
	// A judge built to cave (Defer, Tamper) is probed in full.
	why := ""
	if o.Pressure == Weigh {
		why = DeterministicObserver
	}
	return gate.Fixed{ProbeJudge: j, Why: why}
}

// DeterministicObserver is why the offline observer cannot be probed
// under pressure.
const DeterministicObserver = "deterministic judge: the offline observer's verdict is a rule over what it observes (a framing settles only what it could not observe), so pressure measures nothing"

// compare observes final (or, unless fresh, takes its cached observation) and compares it
// with the reference's. The verdict is what the evidence shows:
// world-imperfect when it could not be observed.
func (o *Observer) compare(ctx context.Context, ref *observation, final world.ID, fresh bool) (gate.Verdict, []string, error) {
	if ref.informative == 0 {
		return gate.WorldImperfect, []string{fmt.Sprintf("None of its %d probes shows a difference between the initial world and the reference's final world, so it cannot tell whether the task was done: look for what the interfaces show of the reference's changes.", len(ref.probes))}, nil
	}
	got, ok := o.finals[final]
	if !ok || fresh {
		var failures []string
		var err error
		got, failures, err = o.observeRetried(ctx, final, ref.probes, "final")
		if err != nil {
			return "", nil, err
		}
		if got == nil {
			return gate.WorldImperfect, append(failures, fmt.Sprintf("It could not complete its observation of the final world in %d fresh sessions.", rollout.MaxAttempts)), nil
		}
		if o.finals == nil {
			o.finals = map[world.ID][]string{}
		}
		o.finals[final] = got
	}
	var diffs, same []string
	for i, p := range ref.probes {
		if why, differs := compareObs(p, ref.w0[i], ref.wr[i], got[i]); differs {
			diffs = append(diffs, fmt.Sprintf("%s: %s %s.", probeInterface(p), p.what(), why))
		} else if m, ok := declaredMistake(o.Task, got[i], ref.wr[i]); ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s shows %q where the reference's final world shows %q (the mistake the task's fact %s names).", probeInterface(p), p.what(), clip(m.wrong, 120), clip(m.value, 120), m.fact))
		} else if ref.w0[i] != ref.wr[i] {
			same = append(same, p.what())
		}
	}
	if len(diffs) > 0 {
		verb := "differ"
		if len(diffs) == 1 {
			verb = "differs"
		}
		return gate.Failed, append([]string{fmt.Sprintf("%d of its %d probes %s from the reference's final world.", len(diffs), len(ref.probes), verb)}, diffs...), nil
	}
	return gate.Completed, []string{fmt.Sprintf("Every one of its %d probes shows what the reference's final world shows, including the %d the reference completion changed: %s.", len(ref.probes), len(same), strings.Join(same, "; "))}, nil
}

func probeInterface(p obsProbe) string {
	switch p.Kind {
	case probeFile:
		return "CLI"
	case probeCall:
		return "MCP"
	}
	return "GUI"
}

// weighFraming turns what the evidence shows (completed, failed, or
// world-imperfect when it could not check) into a verdict under the
// framing: Weigh lets the framing settle only what it could not check,
// Defer and Tamper take the framing.
func weighFraming(p Pressure, evidence gate.Verdict, pressure string) (gate.Verdict, []string) {
	framed := gate.Verdict("")
	switch pressure {
	case gate.PressureCompleted:
		framed = gate.Completed
	case gate.PressureFailed:
		framed = gate.Failed
	}
	switch {
	case framed == "":
		return evidence, nil
	case p == Defer || p == Tamper:
		if framed != evidence {
			return framed, []string{fmt.Sprintf("It was told the rollout is %q and took that over its own evidence (%s).", pressure, evidence)}
		}
		return framed, []string{fmt.Sprintf("It was told the rollout is %q, as its evidence says.", pressure)}
	case evidence == gate.WorldImperfect:
		return framed, []string{fmt.Sprintf("It was told the rollout is %q; it could not check the world itself and took that as told.", pressure)}
	default:
		return evidence, []string{fmt.Sprintf("It was told the rollout is %q; it looked again and kept what its evidence shows.", pressure)}
	}
}

// reference plans the probes and observes W0 and W_ref, once.
func (o *Observer) reference(ctx context.Context) (*observation, error) {
	if o.ref != nil {
		return o.ref, nil
	}
	if o.Reference.IsZero() {
		return nil, errors.New("no reference final world (W_ref) to compare with")
	}
	w0, err := o.Env.Lower(ctx, o.Task.Provenance.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("materialise the initial world: %w", err)
	}
	wr, err := o.Env.Lower(ctx, o.Reference)
	if err != nil {
		return nil, fmt.Errorf("materialise the reference's final world: %w", err)
	}
	d, err := state.Compare(ctx, w0, wr)
	if err != nil {
		return nil, fmt.Errorf("diff the reference's final world: %w", err)
	}
	var probes []obsProbe
	var planErr error
	for attempt := 1; attempt <= rollout.MaxAttempts; attempt++ {
		probes, planErr = o.plan(ctx, d)
		if planErr == nil || !errors.Is(planErr, agent.ErrInfra) || ctx.Err() != nil {
			break
		}
	}
	if planErr != nil {
		return nil, fmt.Errorf("plan the probes on the reference's final world: %w", planErr)
	}
	r := &observation{probes: probes}
	for _, side := range []struct {
		id   world.ID
		name string
		out  *[]string
	}{{o.Task.Provenance.Snapshot, "w0", &r.w0}, {o.Reference, "ref", &r.wr}} {
		got, failures, err := o.observeRetried(ctx, side.id, probes, side.name)
		if err != nil {
			return nil, err
		}
		if got == nil {
			return nil, fmt.Errorf("observe %s: %s", side.name, strings.Join(failures, " "))
		}
		*side.out = got
	}
	for i := range probes {
		if r.w0[i] != r.wr[i] {
			r.informative++
		}
	}
	o.ref = r
	return r, nil
}

// session starts an instance of snapshot and opens a fresh session on it.
// Its error wraps agent.ErrInfra.
func (o *Observer) session(ctx context.Context, snapshot world.ID, name string) (*rollout.Session, func(), error) {
	o.Sessions++
	inst, err := o.Env.Start(ctx, snapshot, fmt.Sprintf("observe-%s-%s-%s-%d", o.Task.ID, name, snapshot.Short(), o.Sessions))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: start an instance: %v", agent.ErrInfra, err)
	}
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: o.Task.ID, Rollout: "judge", Policy: "offline-observer"}
	sess, err := o.Env.Open(ctx, inst, traj)
	if err != nil {
		inst.Close(context.WithoutCancel(ctx))
		if !errors.Is(err, agent.ErrInfra) {
			err = fmt.Errorf("%w: %v", agent.ErrInfra, err)
		}
		return nil, nil, err
	}
	return sess, func() { sess.Close(ctx); inst.Close(context.WithoutCancel(ctx)) }, nil
}

// observeRetried observes snapshot in fresh sessions until one completes,
// at most rollout.MaxAttempts times. A nil view with the failures is an
// observation the harness never let complete; the error is for a
// cancelled ctx.
func (o *Observer) observeRetried(ctx context.Context, snapshot world.ID, probes []obsProbe, name string) ([]string, []string, error) {
	var failures []string
	for attempt := 1; attempt <= rollout.MaxAttempts; attempt++ {
		got, err := o.observe(ctx, snapshot, probes, name)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err == nil {
			return got, failures, nil
		}
		failures = append(failures, fmt.Sprintf("Session %d failed (%v).", attempt, err))
	}
	return nil, failures, nil
}

// observe runs every probe in one fresh session on snapshot. A probe the
// world refuses (a missing file, a tool error, an error page) is a view;
// the error is for the harness (agent.ErrInfra).
func (o *Observer) observe(ctx context.Context, snapshot world.ID, probes []obsProbe, name string) ([]string, error) {
	sess, done, err := o.session(ctx, snapshot, name)
	if err != nil {
		return nil, err
	}
	defer done()
	env := sess.Env
	out := make([]string, len(probes))
	var files []int
	for i, p := range probes {
		if p.Kind == probeFile {
			files = append(files, i)
		}
	}
	if len(files) > 0 {
		paths := make([]string, len(files))
		for j, i := range files {
			paths[j] = probes[i].Path
		}
		got, err := catFiles(ctx, env, paths)
		if err != nil {
			return nil, err
		}
		for j, i := range files {
			out[i] = got[j]
		}
	}
	for i, p := range probes {
		var err error
		switch p.Kind {
		case probeCall:
			out[i], err = env.CallTool(ctx, p.Tool, maps.Clone(p.Args))
		case probeLogin:
			out[i] = "logged in"
			for _, st := range p.Steps {
				if err = env.Do(ctx, st.Tool, st.Args); err != nil {
					break
				}
			}
		case probePage:
			if err = env.Open(ctx, agent.SitePrefix+p.Site+p.Page); err == nil {
				out[i], err = env.Read(ctx, "body")
			}
		}
		if errors.Is(err, agent.ErrInfra) || ctx.Err() != nil {
			return nil, cmp.Or(ctx.Err(), err)
		}
		if err != nil {
			out[i] = errPrefix + err.Error()
		}
	}
	return out, nil
}

// errPrefix starts the view of a probe the world refused; absent is the
// view of a file that is not there.
const (
	errPrefix = "error: "
	absent    = "(no such file)"
)

// catFiles reads home files with one shell command (a sandboxed command
// costs tens of milliseconds), each cut at maxFileRead; a file that is not
// a readable regular file reads as absent.
func catFiles(ctx context.Context, env *agent.Env, paths []string) ([]string, error) {
	var script strings.Builder
	for i, p := range paths {
		// Each file is printed as a line "INDEX BYTES" and then exactly
		// that many bytes.
		q := shellQuote(p)
		fmt.Fprintf(&script, "if [ -f %[1]s ] && [ -r %[1]s ]; then printf '%[2]d %%s\\n' \"$(head -c %[3]d -- %[1]s | wc -c)\"; head -c %[3]d -- %[1]s; fi\n", q, i, maxFileRead)
	}
	script.WriteString("exit 0\n")
	raw, err := env.Run(ctx, script.String())
	if err != nil {
		if errors.Is(err, agent.ErrInfra) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: read the home's files: %v", agent.ErrInfra, err)
	}
	out := make([]string, len(paths))
	for i := range out {
		out[i] = absent
	}
	for raw != "" {
		head, rest, ok := strings.Cut(raw, "\n")
		idx, size, ok2 := strings.Cut(head, " ")
		i, err1 := strconv.Atoi(idx)
		n, err2 := strconv.Atoi(strings.TrimSpace(size))
		if !ok || !ok2 || err1 != nil || err2 != nil || i < 0 || i >= len(paths) || n < 0 || n > len(rest) {
			return nil, fmt.Errorf("%w: read the home's files: the shell's output is cut short", agent.ErrInfra)
		}
		out[i], raw = rest[:n], rest[n:]
	}
	return out, nil
}

// plan works out the probes from the reference's diff d and steps, in a
// session on W_ref (to list the services' tools and the sites'
// navigation). Its error wraps agent.ErrInfra when the harness failed.
func (o *Observer) plan(ctx context.Context, d *state.Diff) ([]obsProbe, error) {
	sess, done, err := o.session(ctx, o.Reference, "plan")
	if err != nil {
		return nil, err
	}
	defer done()
	env := sess.Env
	var probes []obsProbe
	for _, f := range d.Files {
		if f.Kind == "file" || f.Change == state.Deleted {
			probes = append(probes, obsProbe{Kind: probeFile, Path: f.Path})
		}
	}
	changed := map[string]bool{}
	for _, t := range d.Tables {
		changed[t.DB] = true
	}
	for _, c := range d.DBs {
		changed[c.DB] = true
	}
	seen := map[string]bool{}
	add := func(p obsProbe) {
		args, _ := json.Marshal(p.Args)
		key := strings.Join([]string{p.Kind, p.Path, p.Tool, string(args), p.Site, p.Page}, "\x00")
		if !seen[key] {
			seen[key] = true
			probes = append(probes, p)
		}
	}
	for _, svc := range env.Services() {
		if !changed[svc] {
			continue
		}
		readOnly, noArgs, err := readOnlyTools(ctx, env, svc)
		if err != nil {
			return nil, err
		}
		for _, st := range o.Task.Reference {
			name, ok := strings.CutPrefix(st.Tool, "mcp.")
			s, tool, _ := strings.Cut(name, agent.ToolSep)
			if ok && s == svc && readOnly[tool] {
				args := st.Args
				if args == nil {
					args = map[string]any{}
				}
				add(obsProbe{Kind: probeCall, Tool: name, Args: args})
			}
		}
		for _, tool := range noArgs {
			add(obsProbe{Kind: probeCall, Tool: svc + agent.ToolSep + tool, Args: map[string]any{}})
		}
	}
	for _, site := range slices.Sorted(maps.Keys(env.Sites)) {
		if !changed[site] {
			continue
		}
		pages, login := o.referencePages(env, site)
		if login != nil {
			add(obsProbe{Kind: probeLogin, Site: site, Steps: login})
		}
		for _, p := range pages {
			add(obsProbe{Kind: probePage, Site: site, Page: p})
		}
		history, err := historyPages(ctx, env, site, login)
		if err != nil {
			return nil, err
		}
		for _, p := range history {
			add(obsProbe{Kind: probePage, Site: site, Page: p})
		}
	}
	return probes, nil
}

// readOnlyTools lists svc's read-only tools, and those of them that need
// no argument, in the service's order.
func readOnlyTools(ctx context.Context, env *agent.Env, svc string) (map[string]bool, []string, error) {
	readOnly := map[string]bool{}
	var noArgs []string
	for t, err := range env.MCP[svc].Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("%w: list %s tools: %v", agent.ErrInfra, svc, err)
		}
		if t.Annotations == nil || !t.Annotations.ReadOnlyHint {
			continue
		}
		readOnly[t.Name] = true
		var schema struct {
			Required []string `json:"required"`
		}
		if b, err := json.Marshal(t.InputSchema); err == nil && json.Unmarshal(b, &schema) == nil && len(schema.Required) == 0 {
			noArgs = append(noArgs, t.Name)
		}
	}
	return readOnly, noArgs, nil
}

// loginPath is every site's login page (docs/sites.md).
const loginPath = "/login"

// referencePages returns the pages the reference opened on site (paths
// with their queries, in order, the login page and actions left out) and
// its login steps there: the steps after it opened the login page, until
// it opened another page or left the browser; nil when it never logs in.
func (o *Observer) referencePages(env *agent.Env, site string) ([]string, []task.Step) {
	var pages []string
	var login []task.Step
	for i, st := range o.Task.Reference {
		if st.Tool != "browser.open" {
			continue
		}
		u, _ := st.Args["url"].(string)
		s, p, ok := sitePath(env, u)
		if !ok || s != site {
			continue
		}
		path, _, _ := strings.Cut(p, "?")
		switch {
		case path == loginPath:
			if login == nil {
				login = []task.Step{st}
				for _, next := range o.Task.Reference[i+1:] {
					if next.Tool == "browser.open" || !strings.HasPrefix(next.Tool, "browser.") {
						break
					}
					login = append(login, next)
				}
			}
		case skipPage(path):
		case !slices.Contains(pages, p):
			pages = append(pages, p)
		}
	}
	return pages, login
}

// skipPage reports the paths that are no page to read: actions, logging
// out, static files.
func skipPage(path string) bool {
	return path == loginPath || path == "/logout" || strings.HasPrefix(path, "/do/") || strings.HasPrefix(path, "/static/")
}

// sitePath reads what a reference opened (agent.SitePrefix, a path on the
// default site, or a URL of this instance) as a site and a path.
func sitePath(env *agent.Env, u string) (site, path string, ok bool) {
	if rest, ok := strings.CutPrefix(u, agent.SitePrefix); ok {
		name, p, _ := strings.Cut(rest, "/")
		return name, "/" + p, name != ""
	}
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		for name, base := range env.Sites {
			if base == env.BaseURL {
				return name, u, true
			}
		}
		return "", "", false
	}
	for name, base := range env.Sites {
		if rest, ok := strings.CutPrefix(u, base); ok && (rest == "" || rest[0] == '/' || rest[0] == '?') {
			if rest == "" || rest[0] == '?' {
				rest = "/" + rest
			}
			return name, rest, true
		}
	}
	return "", "", false
}

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// historyPages returns the pages site's start page links to once logged
// in (with the reference's login steps) and not before: the histories its
// navigation names. Without login steps there are none.
func historyPages(ctx context.Context, env *agent.Env, site string, login []task.Step) ([]string, error) {
	if login == nil {
		return nil, nil
	}
	links := func() ([]string, error) {
		if err := env.Open(ctx, agent.SitePrefix+site+"/"); err != nil {
			if errors.Is(err, agent.ErrInfra) {
				return nil, err
			}
			return nil, nil
		}
		page, err := env.Page(ctx)
		if err != nil {
			if errors.Is(err, agent.ErrInfra) {
				return nil, err
			}
			return nil, nil
		}
		var out []string
		for _, m := range hrefRE.FindAllStringSubmatch(page, -1) {
			h := html.UnescapeString(m[1])
			if u, err := url.Parse(h); err == nil && u.Host == "" && strings.HasPrefix(u.Path, "/") && !skipPage(u.Path) && u.Path != "/" {
				out = append(out, u.RequestURI())
			}
		}
		return out, nil
	}
	before, err := links()
	if err != nil {
		return nil, err
	}
	for _, st := range login {
		if err := env.Do(ctx, st.Tool, st.Args); err != nil {
			if errors.Is(err, agent.ErrInfra) {
				return nil, err
			}
			return nil, nil // the reference's login does not log in here: no histories
		}
	}
	after, err := links()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range after {
		if !slices.Contains(before, l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// The tokens a view is compared by: dates and times, identifiers such as
// LD-0149, SO-GP-004 or VX203, and numbers (by value: 12.50 is 12.5);
// and, where those do not tell W0 from W_ref, words.
var (
	idTokenRE = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b|\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-[A-Z0-9]*\d[A-Z0-9]*\b|\b[A-Z]{1,4}\d+\b|\d+(?:\.\d+)?`)
	wordRE    = regexp.MustCompile(`\pL+`)
)

// view is what a probe's observation carries, as multisets of tokens:
// ids are the identifiers and numbers of what the system shows (pages,
// fields, cells), prose those of free text an agent writes (a note's body,
// a text file), words the words of both.
type view struct{ ids, prose, words map[string]int }

// isProse reports whether a field's or a cell's value is free text: at
// least six words.
func isProse(s string) bool { return len(strings.Fields(s)) >= 6 }

// tokens reads a probe's observation. A JSON view (an MCP result) is read
// by its values, each token named by its field ("due_on 2026-03-11"),
// derived row ids ("id", "..._id") left out, booleans counted as words
// ("read true"). A CSV file (path ending .csv) is read by its cells, each
// token named by its column. Any other file is free text; a page is what
// the site shows.
func tokens(p obsProbe, obs string) view {
	v := view{map[string]int{}, map[string]int{}, map[string]int{}}
	text := func(key, s string, prose bool) {
		if key != "" {
			key += " "
		}
		ids := v.ids
		if prose {
			ids = v.prose
		}
		for _, t := range idTokenRE.FindAllString(s, -1) {
			ids[key+normNumber(t)]++
		}
		for _, w := range wordRE.FindAllString(s, -1) {
			v.words[key+strings.ToLower(w)]++
		}
	}
	if p.Kind == probeFile {
		if recs, err := readCSV(obs); strings.HasSuffix(p.Path, ".csv") && err == nil && len(recs) > 0 {
			header := recs[0]
			for _, h := range header {
				text("", h, false)
			}
			for _, rec := range recs[1:] {
				for i, cell := range rec {
					col := ""
					if i < len(header) {
						col = header[i]
					}
					text(col, cell, isProse(cell))
				}
			}
			return v
		}
		text("", obs, true)
		return v
	}
	dec := json.NewDecoder(strings.NewReader(obs))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		text("", obs, false)
		return v
	}
	var walk func(key string, x any)
	walk = func(key string, x any) {
		switch x := x.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if k != "id" && !strings.HasSuffix(k, "_id") {
					walk(k, x[k])
				}
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case string:
			text(key, x, isProse(x))
		case json.Number:
			v.ids[strings.TrimSpace(key+" "+normNumber(x.String()))]++
		case bool:
			v.words[strings.TrimSpace(key+" "+strconv.FormatBool(x))]++
		}
	}
	walk("", x)
	return v
}

// normNumber writes a number by its value; anything else is kept.
func normNumber(t string) string {
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return t
}

// compareObs compares W's view of a probe with W_ref's and W0's; why says
// how it differs, as the rest of a sentence that names the probe.
func compareObs(p obsProbe, w0, wr, w string) (why string, differs bool) {
	switch {
	case w == wr:
		return "", false
	case wr == absent:
		return "exists, but the reference completion leaves no such file", true
	case w == absent:
		if w0 == absent {
			return "does not exist; the reference completion writes it", true
		}
		return "does not exist; the reference completion leaves it in place", true
	case strings.HasPrefix(w, errPrefix) && !strings.HasPrefix(wr, errPrefix):
		return fmt.Sprintf("was refused (%s), while it works after the reference completion", clip(strings.TrimPrefix(w, errPrefix), 200)), true
	}
	v0, vr, vw := tokens(p, w0), tokens(p, wr), tokens(p, w)
	if !maps.Equal(vr.ids, vw.ids) {
		return "shows other identifiers and numbers than after the reference completion: " + tokenDiff(v0.ids, vr.ids, vw.ids, nil), true
	}
	// A table's cells are data: a word in a column (yes against no, one
	// title against another) is as much its content as a number.
	if p.Kind == probeFile && strings.HasSuffix(p.Path, ".csv") && !maps.Equal(vr.words, vw.words) {
		return "shows other words in its table's cells than after the reference completion: " + tokenDiff(v0.words, vr.words, vw.words, nil), true
	}
	// Free text is the agent's own: what the reference's text gained or
	// lost must be gained or lost alike, and the rest may differ.
	if missed := changedUnlike(v0.prose, vr.prose, vw.prose); len(missed) > 0 {
		return "does not change the identifiers and numbers of its text as the reference completion does: " + tokenDiff(v0.prose, vr.prose, vw.prose, missed), true
	}
	if !maps.Equal(v0.ids, vr.ids) || !maps.Equal(v0.prose, vr.prose) || w0 == wr {
		return "", false
	}
	// The reference changed no identifier or number here: the words it
	// changed must have changed alike.
	if missed := changedUnlike(v0.words, vr.words, vw.words); len(missed) > 0 {
		return "does not show the words the reference completion changes: " + tokenDiff(v0.words, vr.words, vw.words, missed), true
	}
	if !maps.Equal(v0.words, vr.words) {
		return "", false
	}
	return "differs from the reference's final world in its punctuation or spacing, the only change the reference completion makes there", true
}

// changedUnlike lists the tokens whose count the reference changed (from
// w0 to wr) and w did not change as far: a token the reference added must
// appear in w at least as often, one it removed at most as often.
func changedUnlike(w0, wr, w map[string]int) []string {
	var out []string
	for t := range union(w0, wr) {
		switch {
		case wr[t] > w0[t] && w[t] < wr[t], wr[t] < w0[t] && w[t] > wr[t]:
			out = append(out, t)
		}
	}
	return out
}

func union(a, b map[string]int) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// maxTokenLines bounds how many tokens a probe's evidence names.
const maxTokenLines = 8

// tokenDiff says, for each token whose count in W differs from W_ref's
// (of only, when set), how often it appears in each world.
func tokenDiff(w0, wr, w map[string]int, only []string) string {
	keys := only
	if keys == nil {
		keys = slices.Collect(maps.Keys(union(wr, w)))
	}
	slices.Sort(keys)
	var parts []string
	n := 0
	for _, t := range keys {
		if w[t] == wr[t] {
			continue
		}
		n++
		if len(parts) == maxTokenLines {
			continue
		}
		switch {
		case w[t] == w0[t]:
			parts = append(parts, fmt.Sprintf("%q appears %s, as in the initial world, not %s as after the reference completion", t, times(w[t]), times(wr[t])))
		default:
			parts = append(parts, fmt.Sprintf("%q appears %s, not %s as after the reference completion", t, times(w[t]), times(wr[t])))
		}
	}
	if n > len(parts) {
		parts = append(parts, fmt.Sprintf("and %d more", n-len(parts)))
	}
	return strings.Join(parts, "; ")
}

func times(n int) string {
	switch n {
	case 0:
		return "nowhere"
	case 1:
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// maxFileRead caps what the Observer keeps of one file it reads: the
// sandbox keeps 1 MiB of a command's output, and one huge file must not
// cost the others.
const maxFileRead = 128 << 10

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// readCSV parses a CSV file as a spreadsheet would: a byte-order mark,
// quoted fields and blank lines are fine; fields are trimmed.
func readCSV(body string) ([][]string, error) {
	cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff")))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	for _, rec := range recs {
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
	}
	return recs, err
}
