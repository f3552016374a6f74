package task

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/example/task.json in canonical form")

const example = "testdata/example"

func TestExampleRoundTrip(t *testing.T) {
	if *update {
		b, err := os.ReadFile(filepath.Join(example, File))
		if err != nil {
			t.Fatal(err)
		}
		tk, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Save(example); err != nil {
			t.Fatal(err)
		}
	}
	tk, err := Load(example)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tk.Save(dir); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(example, File))
	got, _ := os.ReadFile(filepath.Join(dir, File))
	if !bytes.Equal(got, want) {
		t.Fatalf("Save(Load(example)) is not byte-identical to testdata (run go test -update):\n%s", got)
	}
	again, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := again.Encode()
	if !bytes.Equal(b2, got) {
		t.Fatal("encoding is not stable")
	}
	if n := len(tk.Verifier.Criteria); n != 4 {
		t.Fatalf("criteria: got %d, want 4", n)
	}
	// Numbers in reference args survive exactly.
	if a := tk.Reference[2].Args["amount"]; a != json.Number("5") {
		t.Fatalf("reference[2].args.amount = %#v, want json.Number(5)", a)
	}
}

func TestPublicHidesInternals(t *testing.T) {
	tk := TestTask(t)
	for _, withHint := range []bool{false, true} {
		b, err := json.Marshal(tk.Public(withHint))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, secret := range []string{tk.Rationale, tk.Rubric[0], tk.Subtasks[0].Title, "verifier", "reference"} {
			if strings.Contains(s, secret) {
				t.Errorf("Public(%v) leaks %q: %s", withHint, secret, s)
			}
		}
		if got := strings.Contains(s, tk.Hint); got != withHint {
			t.Errorf("Public(%v) shows hint: %v", withHint, got)
		}
		if !strings.Contains(s, tk.Instruction) {
			t.Errorf("Public(%v) lacks the instruction", withHint)
		}
	}
}

func TestValidateNamesField(t *testing.T) {
	f := false
	tests := map[string]struct {
		edit func(*Task)
		want string
	}{
		"version":           {func(t *Task) { t.Version = 2 }, "field version: got 2"},
		"id":                {func(t *Task) { t.ID = "Bad_ID" }, "field id:"},
		"instruction":       {func(t *Task) { t.Instruction = " " }, "field instruction: is empty"},
		"interfaces empty":  {func(t *Task) { t.Interfaces = nil }, "field interfaces: is empty"},
		"interface unknown": {func(t *Task) { t.Interfaces = append(t.Interfaces, "web") }, `field interfaces[2]: "web" is not one of gui, mcp, cli`},
		"interface twice":   {func(t *Task) { t.Interfaces = append(t.Interfaces, GUI) }, `field interfaces[2]: "gui" is listed twice`},
		"interface unused":  {func(t *Task) { t.Interfaces = append(t.Interfaces, MCP) }, `field interfaces[2]: "mcp" is declared but no sub-task uses it`},
		"subtask interface": {func(t *Task) { t.Subtasks[1].Interface = MCP }, `field subtasks[1].interface: "mcp" is not in interfaces`},
		"subtask id dup":    {func(t *Task) { t.Subtasks[1].ID = t.Subtasks[0].ID }, "field subtasks[1].id: \"find-orders\" is used twice"},
		"subtask title":     {func(t *Task) { t.Subtasks[0].Title = "" }, "field subtasks[0].title"},
		"subtask decisive":  {func(t *Task) { t.Subtasks[0].Decisive = "smell" }, `field subtasks[0].decisive: "smell" is not a kind of decisive evidence`},
		"hint":              {func(t *Task) { t.Hint = "" }, "field hint"},
		"rubric":            {func(t *Task) { t.Rubric = []string{""} }, "field rubric[0]"},
		"reference tool":    {func(t *Task) { t.Reference[1].Tool = "" }, "field reference[1].tool"},
		"reference unused":  {func(t *Task) { t.Reference = t.Reference[:1] }, `"cli" is declared but the reference completion never uses it`},
		"no criteria":       {func(t *Task) { t.Verifier.Criteria = nil }, "field verifier.criteria: is empty"},
		"criterion kind":    {func(t *Task) { t.Verifier.Criteria[0].Kind = "json" }, `field verifier.criteria[0].kind: "json" is not one of`},
		"criterion field":   {func(t *Task) { t.Verifier.Criteria[0].Regex = "x" }, `field verifier.criteria[0].regex: is not a field of kind "answer"`},
		"criterion id dup":  {func(t *Task) { t.Verifier.Criteria = append(t.Verifier.Criteria, t.Verifier.Criteria[0]) }, "field verifier.criteria[1].id"},
		"sql db": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "q", Kind: KindSQL, DB: "Shop", Query: "SELECT 1", Expect: json.RawMessage("1")}
		}, "field verifier.criteria[0].db"},
		"sql expect missing": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "q", Kind: KindSQL, DB: "shop", Query: "SELECT 1"}
		}, "field verifier.criteria[0].expect: is missing"},
		"sql expect object": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "q", Kind: KindSQL, DB: "shop", Query: "SELECT 1", Expect: json.RawMessage(`{"a":1}`)}
		}, "objects are not allowed"},
		"sql world": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "q", Kind: KindSQL, DB: "shop", Query: "SELECT 1", Expect: json.RawMessage("1"), World: "W0"}
		}, "field verifier.criteria[0].world"},
		"file path": {func(t *Task) { t.Verifier.Criteria[0] = Criterion{ID: "f", Kind: KindFile, Path: "../etc/passwd"} }, "field verifier.criteria[0].path: path \"../etc/passwd\" leaves the home directory"},
		"file exists false": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "f", Kind: KindFile, Path: "a", Exists: &f, Changed: true}
		}, "field verifier.criteria[0].exists"},
		"file regex": {func(t *Task) { t.Verifier.Criteria[0] = Criterion{ID: "f", Kind: KindFile, Path: "a", Regex: "("} }, "field verifier.criteria[0].regex"},
		"csv row":    {func(t *Task) { t.Verifier.Criteria[0] = Criterion{ID: "c", Kind: KindCSV, Path: "a.csv", Row: 2} }, "field verifier.criteria[0].row: is set but equals is not"},
		"csv equals column": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "c", Kind: KindCSV, Path: "a.csv", Header: []string{"a"}, Equals: map[string]string{"b": "1"}}
		}, `column "b" is not in header`},
		"answer empty": {func(t *Task) { t.Verifier.Criteria[0].Contains = []string{""} }, "field verifier.criteria[0].contains[0]"},
		"script path":  {func(t *Task) { t.Verifier.Criteria[0] = Criterion{ID: "s", Kind: KindScript, Script: "../x.py"} }, "field verifier.criteria[0].script"},
		"script sdk":   {func(t *Task) { t.Verifier.Criteria[0] = Criterion{ID: "s", Kind: KindScript, Script: SDKScript} }, "is the shared SDK"},
		"script timeout": {func(t *Task) {
			t.Verifier.Criteria[0] = Criterion{ID: "s", Kind: KindScript, Script: "scripts/a.py", TimeoutSeconds: 9999}
		}, "field verifier.criteria[0].timeout_seconds"},
		"difficulty": {func(t *Task) { t.Difficulty = "easy" }, "field difficulty"},
		"persona":    {func(t *Task) { t.Provenance.Persona = "" }, "field provenance.persona"},
		"snapshot":   {func(t *Task) { t.Provenance.Snapshot = [32]byte{} }, "field provenance.snapshot"},
		"rationale":  {func(t *Task) { t.Rationale = "" }, "field rationale"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tk := TestTask(t)
			tc.edit(tk)
			err := tk.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			if err := tk.Save(t.TempDir()); err == nil {
				t.Fatal("Save accepted an invalid task")
			}
		})
	}
}

func TestParseStrict(t *testing.T) {
	b, err := TestTask(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct{ in, want string }{
		"top-level":  {strings.Replace(string(b), `"hint"`, `"hnt"`, 1), `unknown field "hnt"`},
		"criterion":  {strings.Replace(string(b), `"contains"`, `"contain"`, 1), `unknown field "contain"`},
		"type":       {strings.Replace(string(b), `"version": 1`, `"version": "1"`, 1), "field version: got JSON string"},
		"trailing":   {string(b) + "{}", "unexpected data after the JSON object"},
		"syntax":     {strings.Replace(string(b), `"version": 1,`, `"version": 1`, 1), "line 3 column"},
		"validation": {strings.Replace(string(b), `"version": 1`, `"version": 7`, 1), "field version: got 7"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestExpectNullKept(t *testing.T) {
	tk := TestTask(t, Criterion{ID: "q", Kind: KindSQL, DB: "shop", Query: "SELECT NULL", Expect: json.RawMessage("null")})
	b, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(back.Verifier.Criteria[0].Expect); got != "null" {
		t.Fatalf("expect round-trips as %q, want null", got)
	}
	v, err := ParseExpect(json.RawMessage(`[[1, 2.5, "a", null, true]]`))
	if err != nil {
		t.Fatal(err)
	}
	row := v.([]any)[0].([]any)
	if row[0] != int64(1) || row[1] != 2.5 || row[2] != "a" || row[3] != nil || row[4] != true {
		t.Fatalf("ParseExpect = %#v", row)
	}
}

func TestCheckVerifierDir(t *testing.T) {
	tk := TestTask(t, Criterion{ID: "s", Kind: KindScript, Script: "scripts/check.py"})
	dir := t.TempDir()
	if err := tk.Save(dir); err != nil {
		t.Fatal(err)
	}
	scripts := filepath.Join(dir, VerifierDir, ScriptsDir)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "verifier/scripts/check.py does not exist") {
		t.Fatalf("Load without the script = %v", err)
	}
	os.MkdirAll(scripts, 0o755)
	os.WriteFile(filepath.Join(scripts, "check.py"), []byte("pass\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "_verify_sdk.py does not exist") {
		t.Fatalf("Load without the SDK = %v", err)
	}
	os.WriteFile(filepath.Join(scripts, "_verify_sdk.py"), []byte("\n"), 0o644)
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(scripts, "orphan.py"), []byte("\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "verifier/scripts/orphan.py is not run by any criterion") {
		t.Fatalf("Load with an unreferenced script = %v", err)
	}
}

// TestFactsValidate: a fact names a known kind, has its own id, a wrong
// value other than its value (but for a guessed output), and a value a
// later step or the answer uses; each refusal names the field.
func TestFactsValidate(t *testing.T) {
	base := func(f Fact, at int) *Task {
		tk := &Task{Answer: "Bean There", Reference: []Step{
			{Interface: CLI, Tool: "shell.run", Args: map[string]any{"command": "cat venue"}},
			{Interface: CLI, Tool: "shell.run", Args: map[string]any{"command": "rank 41.38 > t.csv", "n": json.Number("7")}},
		}}
		tk.Reference[at].Facts = []Fact{f}
		return tk
	}
	for _, c := range []struct {
		name string
		f    Fact
		at   int
		want string // "" is valid
	}{
		{"read used later", Fact{ID: "v", Kind: FactRead, Value: "41.38", Wrong: "41.4"}, 0, ""},
		{"number arg", Fact{ID: "v", Kind: FactRead, Value: "7", Wrong: "8"}, 0, ""},
		{"answer", Fact{ID: "v", Kind: FactOutput, Value: "Bean There", Wrong: "Cup Inn"}, 1, ""},
		{"lucky guess", Fact{ID: "v", Kind: FactOutput, Value: "Bean There", Wrong: "Bean There"}, 1, ""},
		{"choice at its own step", Fact{ID: "v", Kind: FactChoice, Value: "41.38", Wrong: "41.4"}, 1, ""},
		{"read used only by its own step", Fact{ID: "v", Kind: FactRead, Value: "41.38", Wrong: "41.4"}, 1, "reference[1].facts[0].value"},
		{"unknown kind", Fact{ID: "v", Kind: "hunch", Value: "41.38", Wrong: "1"}, 0, "reference[0].facts[0].kind"},
		{"bad id", Fact{ID: "V V", Kind: FactRead, Value: "41.38", Wrong: "1"}, 0, "reference[0].facts[0].id"},
		{"empty value", Fact{ID: "v", Kind: FactRead, Wrong: "1"}, 0, "reference[0].facts[0].value"},
		{"read wrong is value", Fact{ID: "v", Kind: FactRead, Value: "41.38", Wrong: "41.38"}, 0, "reference[0].facts[0].wrong"},
		{"a form alike", Fact{ID: "v", Kind: FactRead, Value: "41.38", Wrong: "1", Forms: []Form{{Value: "7", Wrong: "7"}}}, 0, ""},
		{"unused form", Fact{ID: "v", Kind: FactRead, Value: "41.38", Wrong: "1", Forms: []Form{{Value: "nowhere", Wrong: "x"}}}, 0, "reference[0].facts[0].forms[0].value"},
	} {
		err := base(c.f, c.at).ValidateFacts()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error naming %s", c.name, err, c.want)
		}
	}
	dup := base(Fact{ID: "v", Kind: FactRead, Value: "41.38", Wrong: "1"}, 0)
	dup.Reference[1].Facts = []Fact{{ID: "v", Kind: FactOutput, Value: "Bean There", Wrong: "x"}}
	if err := dup.ValidateFacts(); err == nil || !strings.Contains(err.Error(), "reference[1].facts[0].id") {
		t.Errorf("a duplicate id: %v", err)
	}
}

// TestSubstituteAllAtOnce: replacements are made in one pass, the longest
// value first, and never chain.
func TestSubstituteAllAtOnce(t *testing.T) {
	args := map[string]any{"url": "site:f/flights/12", "when": "2026-05-01 10:00", "n": json.Number("12"), "list": []any{"A", "B"}}
	got, changed := SubstituteAll(args, []Form{{Value: "A", Wrong: "B"}, {Value: "B", Wrong: "C"}, {Value: "2026-05-01", Wrong: "2026-05-02"}, {Value: "2026-05-01 10:00", Wrong: "2026-05-03 08:00"}, {Value: "12", Wrong: "13"}})
	want := map[string]any{"url": "site:f/flights/13", "when": "2026-05-03 08:00", "n": json.Number("13"), "list": []any{"B", "C"}}
	if !changed || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if args["url"] != "site:f/flights/12" {
		t.Fatal("the arguments given were changed")
	}
}
