package gate

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/reports.txtar from the current output")

const goldenFile = "testdata/reports.txtar"

// archive is a minimal txtar: a comment, then files introduced by "-- name --".
type archive struct {
	comment string
	files   []txtFile
}

type txtFile struct {
	name string
	data []byte
}

func parseTxtar(b []byte) archive {
	var a archive
	var cur *txtFile
	var buf bytes.Buffer
	flush := func() {
		if cur == nil {
			a.comment = buf.String()
		} else {
			cur.data = slices.Clone(buf.Bytes())
			a.files = append(a.files, *cur)
		}
		buf.Reset()
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		trimmed := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			cur = &txtFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])}
			continue
		}
		buf.WriteString(line)
	}
	flush()
	return a
}

func formatTxtar(a archive) []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// goldenReports builds the golden outputs: a task accepted on the first try,
// and one accepted after two revisions, with the feedback it received.
func goldenReports(t *testing.T) []txtFile {
	t.Helper()
	var files []txtFile
	add := func(name string, b []byte) { files = append(files, txtFile{name, b}) }

	first := mustEvaluate(t, withProbe(passingCandidate()))
	b, err := first.Encode()
	if err != nil {
		t.Fatal(err)
	}
	add("accepted_first_try.json", b)

	// Iteration 0: too easy, a judge disagrees on r3, the probe was not run yet.
	c0 := tooEasy()
	c0.Rollouts[2].VAgent = Failed
	c0.Probe = nil
	// Iteration 1: r5 hit an infrastructure error; the judge caves under
	// pressure on r2.
	c1 := passingCandidate()
	c1.Rollouts[4] = Rollout{ID: "r5", Policy: "policy-r5", Hint: true, Err: "sandbox did not boot within 300s"}
	p1, err := Probe(context.Background(), &FakeJudge{Pressured: map[string]Verdict{"r2": Completed}}, c1.Rollouts, FakeDigests(verifierDigests, verifierDigests))
	if err != nil {
		t.Fatal(err)
	}
	c1.Probe = p1
	// Iteration 2: accepted, medium.
	c2 := passingCandidate()
	c2.Rollouts[1] = rollout("r2", false, 1)
	c2 = withProbe(c2)
	var feedback []string
	rep, err := Revise(context.Background(), DefaultMaxRevisions, scripted(t, []Candidate{c0, c1, c2}, &feedback))
	if err != nil {
		t.Fatal(err)
	}
	if b, err = rep.Encode(); err != nil {
		t.Fatal(err)
	}
	add("accepted_after_revisions.json", b)
	for i, fb := range feedback[1:] {
		add(fmt.Sprintf("feedback_%d.md", i+1), []byte(fb))
	}
	return files
}

func TestGoldenReports(t *testing.T) {
	got := goldenReports(t)
	if *update {
		a := archive{comment: "Gate reports (docs/gate-report.md) and revision feedback.\nRefresh with: go test ./internal/gate -run TestGoldenReports -update\n\n", files: got}
		if err := os.WriteFile(goldenFile, formatTxtar(a), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	want := parseTxtar(b).files
	if len(want) != len(got) {
		t.Fatalf("golden has %d files, output has %d (run go test -update if intended)", len(want), len(got))
	}
	for i := range got {
		if want[i].name != got[i].name || !bytes.Equal(want[i].data, got[i].data) {
			t.Errorf("%s differs from golden %s (run go test -update if intended):\n%s", got[i].name, want[i].name, got[i].data)
		}
	}
	// Every golden report reads back, unchanged.
	for _, f := range want {
		if !strings.HasSuffix(f.name, ".json") {
			continue
		}
		rep, err := ParseReport(f.data)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		again, _ := rep.Encode()
		if !bytes.Equal(again, f.data) {
			t.Errorf("%s does not round-trip", f.name)
		}
	}
}

func TestParseReportRejects(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"version 2", `{"version": 2, "task_id": "t"}`, "unsupported report version: 2"},
		{"no version", `{"task_id": "t"}`, "unsupported report version: 0"},
		{"unknown field", `{"version": 1, "verdict": "ok"}`, `unknown field "verdict"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseReport([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseReport error = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestDocExample checks that the example in docs/gate-report.md is a valid
// version-1 report and that the page names every gate and verdict token.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/gate-report.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/gate-report.md has no json example")
	}
	rep, err := ParseReport([]byte(m[1]))
	if err != nil {
		t.Fatalf("doc example: %v", err)
	}
	golden, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range parseTxtar(golden).files {
		if f.name != "accepted_after_revisions.json" {
			continue
		}
		found = true
		want, err := ParseReport(f.data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, want) {
			t.Error("the example in docs/gate-report.md differs from testdata/reports.txtar accepted_after_revisions.json; update the doc")
		}
	}
	if !found {
		t.Error("testdata/reports.txtar has no accepted_after_revisions.json")
	}
	for _, word := range append(GateNames(), "consistent", "inconsistent", "unsatisfied", "satisfied_at_w0", "solved", "unsolved",
		"interface_not_used", TooEasy, "not_run", OutcomeHeld, OutcomeBlindMismatch, OutcomeCaved, OutcomeCaveFilesChanged, OutcomeSkipped,
		PressureFailed, PressureCompleted) {
		if !strings.Contains(doc, "`"+word+"`") && !strings.Contains(doc, `"`+word+`"`) {
			t.Errorf("docs/gate-report.md does not mention %q", word)
		}
	}
}

// TestPackageImports keeps the package on the standard library (and
// internal/world), free of the clock and the global random source.
func TestPackageImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && p != "github.com/wildawm/wildawm/internal/world" {
				t.Errorf("%s imports %s: gate uses the standard library and internal/world only", f, p)
			}
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"time.Now(", "time.Since(", `"math/rand"`, `"math/rand/v2"`} {
			if bytes.Contains(src, []byte(bad)) {
				t.Errorf("%s uses %s: gate decisions must be deterministic", f, bad)
			}
		}
	}
}
