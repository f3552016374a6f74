package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wildawm/wildawm/internal/sqlguard"
)

// Format is the version of the definition format this engine reads
// (docs/services/definition.md); a definition names it in its first key,
// wildawm_service.
const Format = 1

// Definition is one service, as data: its tables, tools, resources,
// synthesis operations and test world. docs/services/definition.md
// documents every field.
type Definition struct {
	Format       int    `yaml:"wildawm_service" json:"wildawm_service"`
	Name         string `yaml:"name" json:"name"`
	Title        string `yaml:"title" json:"title"`
	Version      string `yaml:"version" json:"version"`
	Instructions string `yaml:"instructions" json:"instructions"`
	// HealthTool is a read-only tool that any world answers with no
	// arguments (the live health check calls it).
	HealthTool string `yaml:"health_tool" json:"health_tool"`
	// Reads names other databases of the world that steps may read
	// (db: NAME), read-only.
	Reads     []string   `yaml:"reads,omitempty" json:"reads,omitempty"`
	Tables    []Table    `yaml:"tables" json:"tables"`
	Tools     []Tool     `yaml:"tools" json:"tools"`
	Resources []Resource `yaml:"resources,omitempty" json:"resources,omitempty"`
	Ops       []Op       `yaml:"ops,omitempty" json:"ops,omitempty"`
	Test      *Test      `yaml:"test,omitempty" json:"test,omitempty"`
	// Snippets are step lists that steps include by name (use: NAME),
	// for a look-up several tools share.
	Snippets map[string][]Step `yaml:"snippets,omitempty" json:"snippets,omitempty"`
}

// Table is one table of the service's database.
type Table struct {
	Name string `yaml:"name" json:"name"`
	// Columns are column definitions as in CREATE TABLE ("id INTEGER
	// PRIMARY KEY", "name TEXT NOT NULL UNIQUE").
	Columns []string `yaml:"columns" json:"columns"`
	// Constraints are table constraints ("UNIQUE(note_id, target)").
	Constraints []string `yaml:"constraints,omitempty" json:"constraints,omitempty"`
	// Key is the natural key: the columns of a UNIQUE constraint (a
	// column's own or a table constraint) by which deltas address rows.
	Key []string `yaml:"key" json:"key"`
	// Indexes are CREATE INDEX statements.
	Indexes []string `yaml:"indexes,omitempty" json:"indexes,omitempty"`
}

// Annotations are a tool's MCP annotations, under MCP's names.
type Annotations struct {
	ReadOnly    bool  `yaml:"readOnlyHint" json:"readOnlyHint"`
	Destructive *bool `yaml:"destructiveHint,omitempty" json:"destructiveHint,omitempty"`
	Idempotent  bool  `yaml:"idempotentHint" json:"idempotentHint"`
	OpenWorld   *bool `yaml:"openWorldHint,omitempty" json:"openWorldHint,omitempty"`
}

// Tool is one MCP tool: what a model sees (name, title, description,
// annotations, the JSON Schemas of its arguments and result) and the steps
// it runs.
type Tool struct {
	Name        string         `yaml:"name" json:"name"`
	Title       string         `yaml:"title" json:"title"`
	Description string         `yaml:"description" json:"description"`
	Annotations Annotations    `yaml:"annotations" json:"annotations"`
	Input       map[string]any `yaml:"input" json:"input"`
	Output      map[string]any `yaml:"output" json:"output"`
	Steps       []Step         `yaml:"steps" json:"steps"`
}

// Resource is a resource or a resource template whose text the steps
// give.
type Resource struct {
	Name        string `yaml:"name" json:"name"`
	Title       string `yaml:"title" json:"title"`
	Description string `yaml:"description" json:"description"`
	MIME        string `yaml:"mime" json:"mime"`
	// URI is a fixed URI, or a template whose variables are whole path
	// segments at its end (notes://note/{note}); each binds :VARIABLE.
	URI   string `yaml:"uri" json:"uri"`
	Steps []Step `yaml:"steps" json:"steps"`
}

// Step is one step of a tool, a resource or an operation's checks; it has
// exactly one of Check, Row, Rows, Page, Exec, Hook and Result.
type Step struct {
	// If is an SQL expression; the step runs only when it is true.
	If string `yaml:"if,omitempty" json:"if,omitempty"`
	// DB runs the step on another database of Reads instead of the
	// service's own (read-only).
	DB string `yaml:"db,omitempty" json:"db,omitempty"`

	// Check is a query whose first column, when its first row has one
	// that is not NULL, is the tool's error message.
	Check string `yaml:"check,omitempty" json:"check,omitempty"`
	// Row is a query whose first row's columns become parameters by
	// name; with no row, Missing (a query giving the error message) runs,
	// or the step binds every column as NULL when Missing is empty.
	Row     string `yaml:"row,omitempty" json:"row,omitempty"`
	Missing string `yaml:"missing,omitempty" json:"missing,omitempty"`
	// Rows is a query whose first column of every row, a JSON value,
	// becomes the JSON array parameter As.
	Rows string `yaml:"rows,omitempty" json:"rows,omitempty"`
	As   string `yaml:"as,omitempty" json:"as,omitempty"`
	// Page is Rows cut to the parameter Limit: it fetches one row more,
	// and when there is one, binds More to true and Next, run with the
	// last kept row's columns as parameters, to NextAs (next_cursor).
	Page   string `yaml:"page,omitempty" json:"page,omitempty"`
	Limit  string `yaml:"limit,omitempty" json:"limit,omitempty"`
	Next   string `yaml:"next,omitempty" json:"next,omitempty"`
	NextAs string `yaml:"next_as,omitempty" json:"next_as,omitempty"`
	More   string `yaml:"more,omitempty" json:"more,omitempty"`
	// Exec is a statement; it binds :changes, the rows it changed.
	Exec string `yaml:"exec,omitempty" json:"exec,omitempty"`
	// Hook is the name of a Go step hook (Hooks.Steps).
	Hook string `yaml:"hook,omitempty" json:"hook,omitempty"`
	// Result is the last step: a query whose first column is the tool's
	// result (a JSON object) or the resource's text.
	Result string `yaml:"result,omitempty" json:"result,omitempty"`
	// Use is replaced, when the definition is read, by the steps of the
	// snippet of that name.
	Use string `yaml:"use,omitempty" json:"use,omitempty"`
}

// Op is a synthesis operation: given parameters, the delta operations that
// write its rows into a world by natural key ("god mode", never through
// the tools).
type Op struct {
	Name        string         `yaml:"name" json:"name"`
	Description string         `yaml:"description" json:"description"`
	Params      map[string]any `yaml:"params" json:"params"`
	// Checks are check steps run on the parameters alone (an empty
	// in-memory database with the service's SQL functions).
	Checks []Step `yaml:"checks,omitempty" json:"checks,omitempty"`
	Emit   []Emit `yaml:"emit" json:"emit"`
	// Example is parameters the operation takes on top of the test world
	// (after the examples of the operations before it): the shared suite
	// applies them all as one day's delta, and they show a synthesizer
	// what the operation wants.
	Example map[string]any `yaml:"example,omitempty" json:"example,omitempty"`
}

// Emit is one delta operation an Op emits, or one per item of a parameter
// that is a JSON array (For: its items bind :item, and an object item's
// fields :item_FIELD).
type Emit struct {
	For    string         `yaml:"for,omitempty" json:"for,omitempty"`
	If     string         `yaml:"if,omitempty" json:"if,omitempty"`
	Insert string         `yaml:"insert,omitempty" json:"insert,omitempty"`
	Update string         `yaml:"update,omitempty" json:"update,omitempty"`
	Delete string         `yaml:"delete,omitempty" json:"delete,omitempty"`
	Key    map[string]any `yaml:"key" json:"key"`
	Values map[string]any `yaml:"values,omitempty" json:"values,omitempty"`
	Set    map[string]any `yaml:"set,omitempty" json:"set,omitempty"`
}

// Test is the definition's test world: what the shared suite, lint and the
// golden transcripts run against.
type Test struct {
	Self        string `yaml:"self" json:"self"`
	SelfAddress string `yaml:"self_address,omitempty" json:"self_address,omitempty"`
	// Now is the clock, RFC 3339.
	Now string `yaml:"now" json:"now"`
	// SQL runs after the schema: the test world's rows.
	SQL []string `yaml:"sql" json:"sql"`
	// Files are home files (path relative to home -> content).
	Files map[string]string `yaml:"files,omitempty" json:"files,omitempty"`
	// Other are other databases of the world (name -> DDL and rows).
	Other map[string][]string `yaml:"other,omitempty" json:"other,omitempty"`
	// Calls are example calls, each a tool call or a resource read; the
	// shared suite runs them all and they double as documentation.
	Calls []Example `yaml:"calls,omitempty" json:"calls,omitempty"`
}

// Example is one example call.
type Example struct {
	Tool     string         `yaml:"tool,omitempty" json:"tool,omitempty"`
	Args     map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
	Resource string         `yaml:"resource,omitempty" json:"resource,omitempty"`
}

// Problems is every problem of a definition, each naming its field.
type Problems []string

func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(p), strings.Join(p, "\n  "))
}

// Parse reads a definition (YAML, or JSON, which is YAML) and validates
// it; the error names every bad field (Problems) or the line YAML could
// not read.
func Parse(src []byte) (*Definition, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	var d Definition
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("definition: %w", err)
	}
	if err := d.expandSnippets(); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

// expandSnippets replaces every use step by its snippet's steps.
func (d *Definition) expandSnippets() error {
	var p Problems
	expand := func(field string, steps []Step) []Step {
		var out []Step
		for i, st := range steps {
			if st.Use == "" {
				out = append(out, st)
				continue
			}
			sn, ok := d.Snippets[st.Use]
			switch {
			case !ok:
				p = append(p, fmt.Sprintf("%s.steps[%d].use: no snippet %q", field, i, st.Use))
			case len(st.kinds()) > 0 || st.DB != "":
				p = append(p, fmt.Sprintf("%s.steps[%d]: a use step has nothing else but an if", field, i))
			}
			for _, x := range sn {
				if x.Use != "" {
					p = append(p, fmt.Sprintf("snippets.%s: a snippet cannot use another", st.Use))
				}
				// The use step's if: guards every step of the snippet.
				switch {
				case st.If == "":
				case x.If == "":
					x.If = st.If
				default:
					x.If = "(" + st.If + ") AND (" + x.If + ")"
				}
				out = append(out, x)
			}
		}
		return out
	}
	for i := range d.Tools {
		d.Tools[i].Steps = expand(fmt.Sprintf("tools[%d] (%s)", i, d.Tools[i].Name), d.Tools[i].Steps)
	}
	for i := range d.Resources {
		d.Resources[i].Steps = expand(fmt.Sprintf("resources[%d]", i), d.Resources[i].Steps)
	}
	if len(p) > 0 {
		return p
	}
	return nil
}

// Load reads and validates the definition in the file path.
func Load(path string) (*Definition, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

var (
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	paramPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

// builtinParams are the parameters every step may use besides the
// arguments and what earlier steps bound.
var builtinParams = []string{"now", "today", "self", "self_address"}

// Validate checks everything a definition can be checked for without a
// database or its Go hooks (New checks those).
func (d *Definition) Validate() error {
	var p Problems
	bad := func(field, format string, args ...any) {
		p = append(p, field+": "+fmt.Sprintf(format, args...))
	}
	if d.Format != Format {
		bad("wildawm_service", "is %d; this engine reads format %d (docs/services/definition.md)", d.Format, Format)
	}
	if !namePattern.MatchString(d.Name) {
		bad("name", "%q must be lower-case letters, digits and _, starting with a letter (it names db/NAME.sqlite)", d.Name)
	}
	if d.Title == "" {
		bad("title", "is empty; give the name a person sees (\"Notes\")")
	}
	if d.Instructions == "" {
		bad("instructions", "is empty; tell a model what the service holds and which tools to start with")
	}
	for i, r := range d.Reads {
		if !namePattern.MatchString(r) || r == d.Name {
			bad(fmt.Sprintf("reads[%d]", i), "%q is not another database's name", r)
		}
	}
	tables := map[string]*Table{}
	if len(d.Tables) == 0 {
		bad("tables", "is empty; a service keeps its state in at least one table")
	}
	for i := range d.Tables {
		t := &d.Tables[i]
		f := fmt.Sprintf("tables[%d]", i)
		if !namePattern.MatchString(t.Name) {
			bad(f+".name", "%q is not a table name (lower-case letters, digits, _)", t.Name)
		} else if tables[t.Name] != nil {
			bad(f+".name", "%q is defined twice", t.Name)
		}
		tables[t.Name] = t
		if len(t.Columns) == 0 {
			bad(f+".columns", "is empty")
		}
		cols := map[string]bool{}
		for j, c := range t.Columns {
			name, _, _ := strings.Cut(strings.TrimSpace(c), " ")
			if !namePattern.MatchString(name) {
				bad(fmt.Sprintf("%s.columns[%d]", f, j), "%q does not start with a column name", c)
			}
			cols[name] = true
		}
		if len(t.Key) == 0 {
			bad(f+".key", "is empty; name the natural key (the UNIQUE columns deltas address rows by)")
		}
		for j, k := range t.Key {
			if !cols[k] {
				bad(fmt.Sprintf("%s.key[%d]", f, j), "%q is not a column of %s", k, t.Name)
			}
		}
		if len(t.Key) > 0 && !t.hasUnique(t.Key) {
			bad(f+".key", "%v is not UNIQUE: declare the column UNIQUE or add the constraint UNIQUE(%s)", t.Key, strings.Join(t.Key, ", "))
		}
		for j, ix := range t.Indexes {
			if !strings.HasPrefix(strings.ToUpper(ix), "CREATE INDEX ") && !strings.HasPrefix(strings.ToUpper(ix), "CREATE UNIQUE INDEX ") {
				bad(fmt.Sprintf("%s.indexes[%d]", f, j), "must be a CREATE INDEX statement")
			}
		}
	}
	toolNames := map[string]bool{}
	if len(d.Tools) == 0 {
		bad("tools", "is empty")
	}
	for i := range d.Tools {
		t := &d.Tools[i]
		f := fmt.Sprintf("tools[%d]", i)
		if !namePattern.MatchString(t.Name) {
			bad(f+".name", "%q must be lower-case letters, digits and _ (a model calls SERVICE__NAME)", t.Name)
		} else if toolNames[t.Name] {
			bad(f+".name", "%q is defined twice", t.Name)
		}
		toolNames[t.Name] = true
		f = fmt.Sprintf("tools[%d] (%s)", i, t.Name)
		if t.Description == "" {
			bad(f+".description", "is empty; tell a model what the tool does and returns")
		}
		args := schemaObject(f+".input", t.Input, bad)
		schemaObject(f+".output", t.Output, bad)
		known := append(slices.Clone(builtinParams), args...)
		d.validateSteps(f, t.Steps, known, t.Annotations.ReadOnly, true, bad)
	}
	if d.HealthTool == "" {
		bad("health_tool", "is empty; name a read-only tool any world answers with no arguments")
	} else if i := slices.IndexFunc(d.Tools, func(t Tool) bool { return t.Name == d.HealthTool }); i < 0 {
		bad("health_tool", "%q is not one of the tools", d.HealthTool)
	} else if !d.Tools[i].Annotations.ReadOnly {
		bad("health_tool", "%q is not read-only (annotations.readOnlyHint)", d.HealthTool)
	}
	for i := range d.Resources {
		r := &d.Resources[i]
		f := fmt.Sprintf("resources[%d]", i)
		if r.Name == "" || r.Description == "" || r.MIME == "" {
			bad(f, "name, description and mime are required")
		}
		vars, err := templateVars(r.URI)
		if err != nil {
			bad(f+".uri", "%v", err)
		}
		d.validateSteps(f, r.Steps, append(slices.Clone(builtinParams), vars...), true, true, bad)
	}
	for i := range d.Ops {
		o := &d.Ops[i]
		f := fmt.Sprintf("ops[%d] (%s)", i, o.Name)
		if !namePattern.MatchString(o.Name) {
			bad(f+".name", "%q must be lower-case letters, digits and _", o.Name)
		}
		params := schemaObject(f+".params", o.Params, bad)
		d.validateSteps(f+".checks", o.Checks, params, true, false, bad)
		for j, c := range o.Checks {
			if c.Check == "" {
				bad(fmt.Sprintf("%s.checks[%d]", f, j), "ops take only check steps")
			}
		}
		if len(o.Emit) == 0 {
			bad(f+".emit", "is empty")
		}
		for j, e := range o.Emit {
			d.validateEmit(fmt.Sprintf("%s.emit[%d]", f, j), e, params, tables, bad)
		}
	}
	if d.Test != nil {
		if d.Test.Self == "" {
			bad("test.self", "is empty; name the persona of the test world")
		}
		if _, err := parseNow(d.Test.Now); err != nil {
			bad("test.now", "%v", err)
		}
		for i, c := range d.Test.Calls {
			switch {
			case (c.Tool == "") == (c.Resource == ""):
				bad(fmt.Sprintf("test.calls[%d]", i), "give tool or resource")
			case c.Tool != "" && !toolNames[c.Tool]:
				bad(fmt.Sprintf("test.calls[%d].tool", i), "%q is not one of the tools", c.Tool)
			}
		}
	}
	if len(p) > 0 {
		return p
	}
	return nil
}

// hasUnique reports whether cols (in any order) are a UNIQUE or PRIMARY KEY
// constraint of t.
func (t *Table) hasUnique(cols []string) bool {
	if len(cols) == 1 {
		for _, c := range t.Columns {
			f := strings.Fields(strings.ToUpper(c))
			if len(f) > 0 && strings.EqualFold(strings.Fields(c)[0], cols[0]) &&
				(slices.Contains(f, "UNIQUE") || strings.Contains(strings.ToUpper(c), "PRIMARY KEY")) {
				return true
			}
		}
	}
	want := slices.Sorted(slices.Values(cols))
	for _, c := range t.Constraints {
		u := strings.ToUpper(strings.TrimSpace(c))
		if !strings.HasPrefix(u, "UNIQUE") && !strings.HasPrefix(u, "PRIMARY KEY") {
			continue
		}
		open, end := strings.Index(c, "("), strings.Index(c, ")")
		if open < 0 || end < open {
			continue
		}
		var got []string
		for _, n := range strings.Split(c[open+1:end], ",") {
			got = append(got, strings.Fields(n)[0])
		}
		if slices.Equal(slices.Sorted(slices.Values(got)), want) {
			return true
		}
	}
	return false
}

// schemaObject checks that s is a JSON Schema of an object and returns its
// property names.
func schemaObject(field string, s map[string]any, bad func(string, string, ...any)) []string {
	if s == nil {
		bad(field, "is missing; give a JSON Schema with type: object")
		return nil
	}
	if s["type"] != "object" {
		bad(field+".type", "must be object")
	}
	props, _ := s["properties"].(map[string]any)
	if _, ok := s["properties"]; ok && props == nil {
		bad(field+".properties", "must be a map of property schemas")
	}
	names := make([]string, 0, len(props))
	for n := range props {
		if !paramPattern.MatchString(n) {
			bad(field+".properties", "%q must be lower-case letters, digits and _ (it binds :%s in SQL)", n, n)
		}
		names = append(names, n)
	}
	if req, ok := s["required"]; ok {
		list, _ := req.([]any)
		for _, r := range list {
			if n, _ := r.(string); props[n] == nil {
				bad(field+".required", "%v is not a property", r)
			}
		}
	}
	if _, err := json.Marshal(s); err != nil {
		bad(field, "is not JSON: %v", err)
	}
	slices.Sort(names)
	return names
}

// validateSteps checks steps in order, each parameter an SQL statement uses
// known (the arguments, the built-ins, what earlier steps bound); readOnly
// forbids exec; result says a last result step is required.
func (d *Definition) validateSteps(field string, steps []Step, known []string, readOnly, result bool, bad func(string, string, ...any)) {
	bound := map[string]bool{}
	for _, k := range known {
		bound[k] = true
	}
	use := func(f, sql string, extra map[string]bool) {
		if strings.TrimSpace(sql) == "" {
			return
		}
		// Exactly one statement, as it runs (an expression inside the
		// statement the engine wraps it in), and no VACUUM: the rule of
		// the SQL guard (sqlguard.One), which the call applies again.
		whole := sql
		if strings.HasSuffix(f, ".if") || strings.HasSuffix(f, ".next") {
			whole = "SELECT (" + sql + ")"
		}
		if _, err := sqlguard.One(whole); err != nil {
			bad(f, "%v", err)
		}
		for _, name := range sqlParams(sql) {
			if !bound[name] && !extra[name] {
				bad(f, "uses :%s, which no argument, built-in (:%s) or earlier step binds", name, strings.Join(builtinParams, ", :"))
			}
		}
	}
	if result && len(steps) == 0 {
		bad(field+".steps", "is empty; end with a result step")
	}
	for i, s := range steps {
		f := fmt.Sprintf("%s.steps[%d]", field, i)
		kinds := s.kinds()
		if len(kinds) != 1 {
			bad(f, "has %s; a step has exactly one of check, row, rows, page, exec, hook, result", orNone(kinds))
			continue
		}
		if s.DB != "" && !slices.Contains(d.Reads, s.DB) {
			bad(f+".db", "%q is not in reads", s.DB)
		}
		use(f+".if", s.If, nil)
		switch kinds[0] {
		case "check":
			use(f+".check", s.Check, nil)
		case "row":
			use(f+".row", s.Row, nil)
			use(f+".missing", s.Missing, nil)
			cols, err := resultColumns(s.Row)
			if err != nil {
				bad(f+".row", "%v", err)
			}
			for _, c := range cols {
				bound[c] = true
			}
		case "rows":
			use(f+".rows", s.Rows, nil)
			if !paramPattern.MatchString(s.As) {
				bad(f+".as", "%q must name the parameter the rows bind", s.As)
			}
			bound[s.As] = true
		case "page":
			use(f+".page", s.Page, nil)
			if !paramPattern.MatchString(s.As) {
				bad(f+".as", "%q must name the parameter the rows bind", s.As)
			}
			if !bound[s.Limit] {
				bad(f+".limit", "%q must name a bound parameter holding the page size", s.Limit)
			}
			cols, err := resultColumns(s.Page)
			if err != nil {
				bad(f+".page", "%v", err)
			}
			last := map[string]bool{}
			for _, c := range cols {
				last[c] = true
			}
			use(f+".next", s.Next, last)
			if s.Next != "" && s.NextAs == "" {
				bad(f+".next_as", "is empty; name the parameter next binds (next_cursor)")
			}
			for _, n := range []string{s.As, s.NextAs, s.More} {
				if n != "" {
					bound[n] = true
				}
			}
		case "exec":
			if readOnly {
				bad(f+".exec", "a read-only tool (readOnlyHint) or a resource cannot write")
			}
			use(f+".exec", s.Exec, nil)
			bound["changes"] = true
		case "hook":
			if !paramPattern.MatchString(s.Hook) {
				bad(f+".hook", "%q is not a hook name", s.Hook)
			}
		case "result":
			use(f+".result", s.Result, nil)
			if i != len(steps)-1 {
				bad(f, "a result step must be the last")
			}
		}
	}
	if result && len(steps) > 0 && steps[len(steps)-1].Result == "" && steps[len(steps)-1].Hook == "" {
		bad(field+".steps", "must end with a result step (or a hook that sets the result)")
	}
}

func orNone(kinds []string) string {
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, " and ")
}

func (s Step) kinds() []string {
	var k []string
	for _, c := range []struct {
		name, v string
	}{{"check", s.Check}, {"row", s.Row}, {"rows", s.Rows}, {"page", s.Page}, {"exec", s.Exec}, {"hook", s.Hook}, {"result", s.Result}} {
		if strings.TrimSpace(c.v) != "" {
			k = append(k, c.name)
		}
	}
	return k
}

func (d *Definition) validateEmit(f string, e Emit, params []string, tables map[string]*Table, bad func(string, string, ...any)) {
	known := map[string]bool{}
	for _, p := range params {
		known[p] = true
	}
	if e.For != "" {
		if !known[strings.TrimPrefix(e.For, ":")] {
			bad(f+".for", "%q is not a parameter", e.For)
		}
		known["item"] = true
	}
	n := 0
	var table string
	for _, t := range []string{e.Insert, e.Update, e.Delete} {
		if t != "" {
			n++
			table = t
		}
	}
	if n != 1 {
		bad(f, "give exactly one of insert, update, delete (a table)")
		return
	}
	t := tables[table]
	if t == nil {
		bad(f, "%q is not a table of the definition", table)
		return
	}
	if len(e.Key) == 0 {
		bad(f+".key", "is empty; rows are addressed by their natural key %v", t.Key)
	}
	for k := range e.Key {
		if !slices.Contains(t.Key, k) {
			bad(f+".key", "%q is not in %s's natural key %v", k, table, t.Key)
		}
	}
	if e.Insert == "" && len(e.Values) > 0 || e.Update == "" && len(e.Set) > 0 {
		bad(f, "values go with insert, set with update")
	}
}

// sqlParams lists the :name parameters of an SQL text (outside quotes and
// comments), each once.
func sqlParams(sql string) []string {
	var names []string
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return names
			}
			i += j + 1
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return names
			}
			i += j
		case c == ':' && i+1 < len(sql) && (sql[i+1] == '_' || sql[i+1] >= 'a' && sql[i+1] <= 'z'):
			j := i + 1
			for j < len(sql) && (sql[j] == '_' || sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= '0' && sql[j] <= '9') {
				j++
			}
			if !slices.Contains(names, sql[i+1:j]) {
				names = append(names, sql[i+1:j])
			}
			i = j - 1
		}
	}
	return names
}

// resultColumns returns the names of a SELECT's result columns as far as
// they are written "AS name" at the top level; a column without AS is
// named by its last identifier. It is used to know which parameters a row
// step binds before any database exists, so it errs on the side of an
// error that names the column to alias.
func resultColumns(query string) ([]string, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, nil
	}
	// The select list is the text after the first top-level SELECT and
	// before its top-level FROM (or the end). A WITH clause comes first.
	list, ok := topLevelSelectList(q)
	if !ok {
		return nil, errors.New("is not a SELECT (write SELECT ... AS name, ...)")
	}
	var cols []string
	for _, item := range splitTop(list, ',') {
		item = strings.TrimSpace(item)
		words := strings.Fields(item)
		if len(words) >= 2 && strings.EqualFold(words[len(words)-2], "AS") {
			cols = append(cols, strings.Trim(words[len(words)-1], `"`))
			continue
		}
		last := item
		if i := strings.LastIndexByte(last, '.'); i >= 0 {
			last = last[i+1:]
		}
		if !paramPattern.MatchString(last) {
			return nil, fmt.Errorf("column %q needs a name: write it AS name", item)
		}
		cols = append(cols, last)
	}
	return cols, nil
}

// topLevelSelectList returns the select list of the last top-level SELECT
// of q (after a WITH clause's parenthesised queries).
func topLevelSelectList(q string) (string, bool) {
	depth, start := 0, -1
	upper := strings.ToUpper(q)
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'', '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				return "", false
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			depth--
		default:
			if depth != 0 || !wordAt(upper, i) || strings.HasSuffix(strings.TrimRight(upper[:i], " \t\n"), " AS") {
				continue
			}
			switch {
			case keywordAt(upper, i, "SELECT") && start < 0:
				start = i + len("SELECT")
				if strings.HasPrefix(strings.TrimSpace(upper[start:]), "DISTINCT ") {
					start = strings.Index(upper[start:], "DISTINCT") + start + len("DISTINCT")
				}
			case start >= 0 && (keywordAt(upper, i, "FROM") || keywordAt(upper, i, "WHERE") || keywordAt(upper, i, "ORDER") ||
				keywordAt(upper, i, "LIMIT") || keywordAt(upper, i, "GROUP") || keywordAt(upper, i, "UNION")):
				return q[start:i], true
			}
		}
	}
	if start < 0 {
		return "", false
	}
	return q[start:], true
}

// wordAt reports whether a keyword may start at i (not inside a word).
func wordAt(s string, i int) bool {
	if i > 0 {
		c := s[i-1]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == ':' {
			return false
		}
	}
	return true
}

// keywordAt reports whether the keyword kw is at i of s as a whole word:
// a column such as from_addr or order_id does not end a select list.
func keywordAt(s string, i int, kw string) bool {
	if !strings.HasPrefix(s[i:], kw) {
		return false
	}
	if j := i + len(kw); j < len(s) {
		c := s[j]
		return !(c == '_' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}
	return true
}

// splitTop splits s at sep outside parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			if j := strings.IndexByte(s[i+1:], c); j >= 0 {
				i += j + 1
			}
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, s[from:i])
				from = i + 1
			}
		}
	}
	return append(parts, s[from:])
}

// templateVars returns the variables of a resource URI: none for a fixed
// URI; for a template, its {name} segments, which must all be at its end.
func templateVars(uri string) ([]string, error) {
	if !strings.Contains(uri, "://") {
		return nil, fmt.Errorf("%q is not a URI (scheme://...)", uri)
	}
	i := strings.IndexByte(uri, '{')
	if i < 0 {
		return nil, nil
	}
	if uri[i-1] != '/' {
		return nil, fmt.Errorf("%q: a variable must be a whole path segment", uri)
	}
	var vars []string
	for _, seg := range strings.Split(uri[i:], "/") {
		name, ok := strings.CutPrefix(seg, "{")
		name, ok2 := strings.CutSuffix(name, "}")
		if !ok || !ok2 || !paramPattern.MatchString(name) {
			return nil, fmt.Errorf("%q: after the first variable every segment must be one {variable}", uri)
		}
		vars = append(vars, name)
	}
	return vars, nil
}

// parseNow reads a test world's clock (RFC 3339).
func parseNow(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (2026-03-01T09:00:00Z)", s)
	}
	return t, nil
}
