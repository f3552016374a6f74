package world_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// allowed lists, for each core package, the project packages it may import
// at most (under internal/). The domain package imports none; the
// deterministic core stays below the CLI. docs/ARCHITECTURE.md's row of a
// core package may allow less than this, never more: the map guards the
// core against a loosened doc.
var allowed = map[string][]string{
	"world":      {},
	"generator":  {},
	"state":      {"world"},
	"store":      {"world"},
	"sqlguard":   {},
	"delta":      {"world", "state", "sqlguard"},
	"reset":      {"world"},
	"benchworld": {"world", "state", "delta"},
	"task":       {"world"},
	"verify":     {"world", "state", "task", "sqlguard"},
	"sandbox":    {"world", "scratch"},
	"scratch":    {},
	"gate":       {},
	"vision":     {},
	"catalog":    {"world", "state", "generator"},
	"gcpolicy":   {},
	"rl":         {},
}

// archDoc is the page whose package table the test holds the module to.
const archDoc = "docs/ARCHITECTURE.md"

// TestArchitecture holds every package of the module (go list ./...) to
// docs/ARCHITECTURE.md's package table: each package has exactly one row
// and every row names packages that exist; each package has a package doc
// comment; and each package imports only the project packages its row's
// "may import" column allows (for a package of tests only, no file but
// a doc.go, what its tests import). The core packages' rows allow no more than the allowed map.
func TestArchitecture(t *testing.T) {
	root := moduleRoot(t)
	pkgs, module := listPackages(t, root)
	rows := readTable(t, filepath.Join(root, archDoc))

	byPkg := map[string]row{}
	for _, r := range rows {
		for _, p := range r.pkgs {
			if prev, ok := byPkg[p]; ok {
				t.Errorf("%s:%d: package %s has a row already (line %d): one row per package", archDoc, r.line, p, prev.line)
			}
			byPkg[p] = r
		}
	}
	listed := map[string]bool{}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		listed[rel] = true
		r, ok := byPkg[rel]
		if !ok {
			t.Errorf("package %s has no row in %s's package table: add one, `| %s | its concept in a line | the project packages it may import |`", rel, archDoc, rel)
		}
		if doc(t, p) == "" {
			t.Errorf("package %s has no package doc comment: add one (in doc.go when the package has several files) saying what it is and what it may import", rel)
		}
		if !ok {
			continue
		}
		imports := p.Imports
		if testsOnly(p) { // its tests are what it is
			imports = append(slices.Clone(p.TestImports), p.XTestImports...)
		}
		for _, imp := range imports {
			dep, ok := strings.CutPrefix(imp, module+"/internal/")
			if !ok || dep == strings.TrimPrefix(rel, "internal/") { // not the project's, or its own external test package
				continue
			}
			if !r.mayImport(dep) {
				t.Errorf("%s imports %s, which its row in %s (line %d) does not allow (may import: %s): drop the import, or change the row if the design changed", rel, imp, archDoc, r.line, r.importsCell)
			}
		}
		if core, ok := allowed[strings.TrimPrefix(rel, "internal/")]; ok {
			for _, e := range r.imports {
				if !slices.Contains(core, e) {
					t.Errorf("%s:%d lets core package %s import %s, which the core rule (allowed in internal/world/imports_test.go) forbids: it may import only %v", archDoc, r.line, rel, e, core)
				}
			}
		}
	}
	for _, r := range rows {
		for _, p := range r.pkgs {
			if !listed[p] {
				t.Errorf("%s:%d: row for %s, which is no package of the module (go list ./...): remove the row, or fix its path", archDoc, r.line, p)
			}
		}
		for _, e := range r.imports {
			if !slices.ContainsFunc(pkgs, func(p goPackage) bool { return matches(e, strings.TrimPrefix(p.ImportPath, module+"/internal/")) }) {
				t.Errorf("%s:%d: %s may import %q, which names no package under internal/: fix or drop the entry", archDoc, r.line, strings.Join(r.pkgs, ", "), e)
			}
		}
	}
}

// goPackage is the part of `go list -json`'s output the test reads.
type goPackage struct {
	ImportPath   string
	Name         string
	Dir          string
	Doc          string
	GoFiles      []string
	TestGoFiles  []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Module       *struct{ Path string }
}

// moduleRoot walks up from the test's directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// listPackages returns every package of the module at root and the
// module's path.
func listPackages(t *testing.T, root string) ([]goPackage, string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []goPackage
	module := ""
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list ./...: %v", err)
		}
		if p.Module == nil {
			t.Fatalf("go list: package %s is in no module", p.ImportPath)
		}
		module = p.Module.Path
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list ./... listed no package")
	}
	return pkgs, module
}

// testsOnly reports whether p is a package of tests only: no non-test
// file, or only a doc.go.
func testsOnly(p goPackage) bool {
	return len(p.GoFiles) == 0 || slices.Equal(p.GoFiles, []string{"doc.go"})
}

// doc is p's package doc comment; for a package of tests only (go list
// reads no test file for it), the one its test files carry.
func doc(t *testing.T, p goPackage) string {
	t.Helper()
	if p.Doc != "" || len(p.GoFiles) > 0 {
		return p.Doc
	}
	for _, name := range p.TestGoFiles {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			return f.Doc.Text()
		}
	}
	return ""
}

// row is one row of the package table. The package cell lists paths from
// the module root, comma-separated, with one {a,b} group expanded
// (internal/service/{mail,notes}). The may-import cell lists packages
// under internal/, comma-separated: a path (world, service/dbtool), X/*
// for every package below internal/X, "nothing" or "everything".
type row struct {
	line        int
	pkgs        []string
	imports     []string
	everything  bool
	importsCell string
}

func (r row) mayImport(dep string) bool {
	return r.everything || slices.ContainsFunc(r.imports, func(e string) bool { return matches(e, dep) })
}

// matches reports whether the may-import entry e allows package dep (both
// under internal/).
func matches(e, dep string) bool {
	if parent, ok := strings.CutSuffix(e, "/*"); ok {
		return strings.HasPrefix(dep, parent+"/")
	}
	return e == dep
}

// readTable parses the first table of path whose header starts with
// "| package |".
func readTable(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !in && strings.HasPrefix(line, "| package |"):
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			return rows
		case strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s:%d: want 3 cells (package, concept, may import), have %d: %s", archDoc, n, len(cells), line)
		}
		r := row{line: n, importsCell: strings.TrimSpace(cells[2])}
		for _, p := range splitTop(cells[0]) {
			expanded, err := expand(p)
			if err != nil {
				t.Fatalf("%s:%d: package cell: %v", archDoc, n, err)
			}
			r.pkgs = append(r.pkgs, expanded...)
		}
		switch c := strings.ReplaceAll(r.importsCell, "`", ""); c {
		case "nothing":
		case "everything":
			r.everything = true
		default:
			for _, e := range strings.Split(c, ",") {
				e = strings.TrimSpace(e)
				if e == "" || strings.ContainsAny(e, " ()") {
					t.Fatalf("%s:%d: may-import entry %q: want a package under internal/ (world, service/dbtool), X/* or the whole cell nothing or everything", archDoc, n, e)
				}
				r.imports = append(r.imports, e)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !in {
		t.Fatalf("%s has no table whose header starts with | package |", archDoc)
	}
	return rows
}

// splitTop splits s at the commas outside braces and trims each part.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// expand expands one {a,b} group of a package path.
func expand(p string) ([]string, error) {
	p = strings.Trim(p, "`")
	lb, rb := strings.IndexByte(p, '{'), strings.IndexByte(p, '}')
	if lb < 0 && rb < 0 {
		if p == "" || strings.ContainsAny(p, " ,") {
			return nil, fmt.Errorf("%q: want a path from the module root (internal/state)", p)
		}
		return []string{p}, nil
	}
	if lb < 0 || rb < lb || strings.Count(p, "{") > 1 {
		return nil, fmt.Errorf("%q: want one {a,b} group", p)
	}
	var out []string
	for _, alt := range strings.Split(p[lb+1:rb], ",") {
		out = append(out, p[:lb]+strings.TrimSpace(alt)+p[rb+1:])
	}
	return out, nil
}

// TestCoreReadsNoClock checks that the deterministic core never calls
// time.Now or the global math/rand source.
func TestCoreReadsNoClock(t *testing.T) {
	for _, pkg := range []string{"world", "state", "store", "delta", "generator", "benchworld", "task", "verify", "gate", "vision", "catalog", "rl"} {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			for _, bad := range []string{"time.Now(", "time.Since(", "rand.Int(", "rand.IntN(", "rand.Float64(", "rand.Read(", `"math/rand"`} {
				if strings.Contains(src, bad) {
					t.Errorf("%s uses %s: the core takes a Clock and a seeded *rand.Rand", f, bad)
				}
			}
		}
	}
}
