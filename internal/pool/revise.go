package pool

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Fix kinds: what the procedural author changes in a verifier.
const (
	// FixTighten adds a criterion for a change the reference makes that
	// the verifier did not check: the judges saw a rollout miss it while V
	// passed it.
	FixTighten = "tighten"
	// FixRelax drops a criterion that failed rollouts both judges found
	// completed.
	FixRelax = "relax"
	// FixDropUntargeted drops a criterion no mutation of the solved state
	// flips: it checks nothing the task changes.
	FixDropUntargeted = "drop-untargeted"
	// FixDropEntangled drops a criterion that flips only together with
	// another: it adds no check of its own.
	FixDropEntangled = "drop-entangled"
)

// revise is the procedural author's answer to a failed report: fixes to
// the verifier, applied to d, or why it has none. It fixes what the
// verifier gets wrong (the judges' and the mutation check's evidence);
// a task the ensemble cannot solve, or finds too easy, it leaves as it is.
func (st *gating) revise(ctx context.Context, d *taskgen.Draft, rep *gate.Report, mut *Mutation) ([]Fix, string, error) {
	failed := rep.FailedGates()
	var fixes []Fix
	if slices.Contains(failed, gate.GateJudgeConsistency) || slices.Contains(failed, GateInterfaces) || slices.Contains(failed, GateCoverage) {
		fs, err := st.fixConsistency(ctx, d)
		if err != nil {
			return nil, "", err
		}
		fixes = append(fixes, fs...)
	}
	if slices.Contains(failed, GateMutation) && mut != nil {
		fixes = append(fixes, fixMutation(d, mut)...)
	}
	if len(fixes) == 0 {
		return nil, fmt.Sprintf("the procedural author has no fix for %s: it changes verifiers (judge consistency, mutation), not what the task asks", strings.Join(failed, ", ")), nil
	}
	return fixes, "", nil
}

// fixConsistency tightens the verifier where both judges failed a rollout
// V passed (or a replay without an interface, or without one effect,
// passed V with another world),
// and relaxes it where both judges completed one V failed.
func (st *gating) fixConsistency(ctx context.Context, d *taskgen.Draft) ([]Fix, error) {
	var loose, strict []RolloutRecord
	for _, r := range st.recs {
		if !r.countable() || r.Ablation != "" {
			continue
		}
		if r.Without != "" || r.LeftOut > 0 {
			// A replay without an interface, or without one effect, that
			// changed the world otherwise and still passed: V misses what
			// that interface, or that step, does.
			if r.V == 1 && r.Final != st.check.Final {
				loose = append(loose, r)
			}
			continue
		}
		switch {
		case r.V == 1 && r.VLLM == gate.Failed && r.VAgent == gate.Failed:
			loose = append(loose, r)
		case r.V == 0 && r.VLLM == gate.Completed && r.VAgent == gate.Completed:
			strict = append(strict, r)
		}
	}
	var fixes []Fix
	if len(loose) > 0 {
		cands, err := diffCriteria(ctx, st.w0, st.ref, "")
		if err != nil {
			return nil, err
		}
		for _, dc := range cands {
			c := dc.Criterion
			if slices.ContainsFunc(d.Task.Verifier.Criteria, func(e task.Criterion) bool { return e.ID == c.ID }) {
				continue
			}
			// Keep a criterion only if it tells a loose rollout apart.
			catches := []string{}
			for _, r := range loose {
				dir, err := st.env.Lower(ctx, r.Final)
				if err != nil {
					return nil, err
				}
				ok, err := passes(ctx, d.Task, c, st.w0, dir, st.env.CatalogDB())
				if err != nil {
					return nil, err
				}
				if !ok {
					catches = append(catches, r.ID)
				}
			}
			if len(catches) == 0 {
				continue
			}
			d.Task.Verifier.Criteria = append(d.Task.Verifier.Criteria, c)
			fixes = append(fixes, Fix{Kind: FixTighten, Criterion: c.ID, Target: dc.Target, Why: fmt.Sprintf("V passed %s, which both judges failed or which left an interface out: %s now checks %s", strings.Join(catches, ", "), c.ID, c.Description)})
		}
	}
	if len(strict) > 0 {
		drop := map[string][]string{}
		for _, r := range strict {
			vr, err := st.env.Score(ctx, d.Task, filepath.Join(st.dir, "verifier"), r.Final, r.Answer, r.Fault)
			if err != nil {
				return nil, err
			}
			for _, c := range vr.Criteria {
				if !c.Pass {
					drop[c.ID] = append(drop[c.ID], r.ID)
				}
			}
		}
		for _, id := range sortedKeys(drop) {
			if len(d.Task.Verifier.Criteria) <= 1 {
				break
			}
			if dropCriterion(d, id) {
				fixes = append(fixes, Fix{Kind: FixRelax, Criterion: id, Why: fmt.Sprintf("both judges completed %s, which %s failed", strings.Join(drop[id], ", "), id)})
			}
		}
	}
	return fixes, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fixMutation drops the criteria the mutation check found checking
// nothing of their own.
func fixMutation(d *taskgen.Draft, mut *Mutation) []Fix {
	var fixes []Fix
	for _, id := range mut.Untargeted {
		if len(d.Task.Verifier.Criteria) > 1 && dropCriterion(d, id) {
			fixes = append(fixes, Fix{Kind: FixDropUntargeted, Criterion: id, Why: fmt.Sprintf("no mutation of the solved state flips %s: it checks nothing the task changes", id)})
		}
	}
	// Of criteria entangled with each other, keep the first.
	dropped := map[string]bool{}
	for _, c := range slices.Clone(d.Task.Verifier.Criteria) {
		with, ok := mut.Entangled[c.ID]
		if !ok || len(d.Task.Verifier.Criteria) <= 1 {
			continue
		}
		// c goes if one it is entangled with stays.
		keeps := slices.ContainsFunc(with, func(o string) bool { return !dropped[o] && hasCriterion(d, o) })
		if keeps && dropCriterion(d, c.ID) {
			dropped[c.ID] = true
			fixes = append(fixes, Fix{Kind: FixDropEntangled, Criterion: c.ID, Why: fmt.Sprintf("every mutation that flips %s also flips %s: it adds no check of its own", c.ID, strings.Join(with, ", "))})
		}
	}
	return fixes
}

func hasCriterion(d *taskgen.Draft, id string) bool {
	return slices.ContainsFunc(d.Task.Verifier.Criteria, func(c task.Criterion) bool { return c.ID == id })
}

// dropCriterion removes criterion id (and its script) from d.
func dropCriterion(d *taskgen.Draft, id string) bool {
	i := slices.IndexFunc(d.Task.Verifier.Criteria, func(c task.Criterion) bool { return c.ID == id })
	if i < 0 {
		return false
	}
	c := d.Task.Verifier.Criteria[i]
	d.Task.Verifier.Criteria = slices.Delete(d.Task.Verifier.Criteria, i, i+1)
	if c.Kind == task.KindScript {
		stillUsed := slices.ContainsFunc(d.Task.Verifier.Criteria, func(o task.Criterion) bool { return o.Script == c.Script })
		if !stillUsed {
			delete(d.Scripts, filepath.Base(c.Script))
		}
	}
	return true
}

// passes evaluates one declarative criterion of t on (initial, final).
func passes(ctx context.Context, t *task.Task, c task.Criterion, initial, final, catalogDB string) (bool, error) {
	one := *t
	one.Verifier = task.Verifier{Criteria: []task.Criterion{c}}
	vr, err := verify.Verify(ctx, &one, verify.Input{Initial: initial, Final: final, Catalog: catalogDB})
	if err != nil {
		return false, err
	}
	return vr.V == 1, nil
}

// derived is a criterion derived from the reference's changes, with what
// it checks ("db.table" or a home path).
type derived struct {
	Target    string
	Criterion task.Criterion
}

var idColRE = regexp.MustCompile(`(^|_)(id|rowid|at|created|updated|time|ts)$`)

// diffCriteria derives criteria from what the reference changed (W0 to
// solved): for each row it added, the count of rows with its values by
// natural columns (never row ids or timestamps); for each file it wrote,
// the identifiers and numbers the file carries. only, if set, restricts
// them to one "db.table" or home path.
func diffCriteria(ctx context.Context, w0, solved, only string) ([]derived, error) {
	d, err := state.Compare(ctx, w0, solved)
	if err != nil {
		return nil, err
	}
	var out []derived
	for _, td := range d.Tables {
		if only != "" && only != td.DB+"."+td.Table {
			continue
		}
		for i, row := range td.Added {
			if i == 3 {
				break
			}
			var conds []string
			for _, col := range sortedKeys(row) {
				if idColRE.MatchString(strings.ToLower(col)) {
					continue
				}
				lit, ok := sqlLiteral(row[col])
				if !ok {
					continue
				}
				if lit == "NULL" {
					conds = append(conds, fmt.Sprintf("%q IS NULL", col))
				} else {
					conds = append(conds, fmt.Sprintf("%q = %s", col, lit))
				}
			}
			if len(conds) == 0 {
				continue
			}
			q := fmt.Sprintf("SELECT count(*) FROM %q WHERE %s", td.Table, strings.Join(conds, " AND "))
			n, err := countRows(ctx, filepath.Join(solved, world.DBDir, td.DB+".sqlite"), q)
			if err != nil {
				continue // a query the table does not answer is no criterion
			}
			out = append(out, derived{Target: td.DB + "." + td.Table, Criterion: task.Criterion{ID: fmt.Sprintf("ref-%s-%s-%d", td.DB, slug(td.Table), i+1), Kind: task.KindSQL, DB: td.DB,
				Description: fmt.Sprintf("the %s row the reference adds to %s.%s, by its values", ordinal(i+1), td.DB, td.Table),
				Query:       q, Expect: json.RawMessage(strconv.FormatInt(n, 10))}})
		}
	}
	for _, f := range d.Files {
		if f.Kind != "file" || f.Change == state.Deleted || (only != "" && only != f.Path) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(solved, world.HomeDir, f.Path))
		if err != nil {
			return nil, err
		}
		toks := uniqueTokens(string(b), 12)
		if len(toks) == 0 {
			continue
		}
		out = append(out, derived{Target: f.Path, Criterion: task.Criterion{ID: "ref-file-" + slug(f.Path), Kind: task.KindFile, Path: f.Path,
			Description: "the file the reference writes carries its identifiers and numbers", Contains: toks}})
	}
	return out, nil
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return strconv.Itoa(n) + "th"
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

var tokRE = regexp.MustCompile(`\b[A-Za-z]{1,6}\d*-\d{2,6}\b|\b\d+(\.\d+)?\b`)

func uniqueTokens(s string, max int) []string {
	var out []string
	for _, t := range tokRE.FindAllString(s, -1) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
		if len(out) == max {
			break
		}
	}
	return out
}

func sqlLiteral(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "NULL", true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case string:
		if len(x) > 200 {
			return "", false
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", true
	}
	return "", false
}

func countRows(ctx context.Context, path, q string) (int64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}
