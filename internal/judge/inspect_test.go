package judge

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
)

// A spec sheet as pdftotext -layout prints the case study's.
const sheetText = `Surge protection line-up

SKU                  Model                Joules        Outlets       Rack units   Price USD
RG8-1001             RackGuard Pro        2700          8             1            149.99
                     8-Outlet 1U Rack
RG8-1002             RackGuard Pro        2700          8             1            149.99
                     8-Outlet 1U Rack
PW10-2700            PowerWall 10-Outlet 2700           10            1            169.99
PW8-2700             PowerWall 8-Outlet   2700          8             1            189.99
RG6-3000             RackGuard Compact 3000             6             1            99.99
ST12-3600            StageTrak 12-Outlet 3600           12            2            219.99
VL10-1800            VoltLine 10-Outlet   1800          10            1            89.99
`

const bomText = `# Venue rack: bill of materials

- Form factor: 1U rack mount
- Outlets: at least 8
- Surge rating: at least 2000 joules
`

const stockText = "sku,item,qty,location\nPW10-2700,PowerWall 10-Outlet,1,storage\n"

// fakeEnv is a workspace of files whose shell is a plain bash in a
// temporary home, with a pdftotext that prints the "PDF" as it is.
func fakeEnv(t *testing.T, files map[string]string) *agent.Env {
	home := t.TempDir()
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "pdftotext"), []byte("#!/bin/sh\ncat \"$2\"\n"), 0o755)
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(home, name)), 0o755)
		os.WriteFile(filepath.Join(home, name), []byte(body), 0o644)
	}
	return &agent.Env{Traj: &agent.Trajectory{}, Shell: func(ctx context.Context, command string) (*sandbox.Result, error) {
		cmd := exec.CommandContext(ctx, "/bin/bash", "-c", command)
		cmd.Dir = home
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "LANG=C.UTF-8"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code, err = ee.ExitCode(), nil
		}
		return &sandbox.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code}, err
	}}
}

// TestInspectorChecksTheWholeShortlist: the judge works out the eligible,
// unstocked models from the requirements, the sheet and the inventory, so
// a shortlist that is ordered right but incomplete, or has wrong numbers,
// fails; one it cannot read the sources for is unverified, not passed.
func TestInspectorChecksTheWholeShortlist(t *testing.T) {
	if _, err := exec.LookPath("/bin/bash"); err != nil {
		runtime.SkipOutsideCI(t, "the fake workspace shell is /bin/bash (apt-get install -y bash)")
	}
	tk := &task.Task{
		Instruction: "Write a ranked shortlist of the rack surge protectors that meet the requirements in ~/bom.md and that we do not already stock " +
			"(see ~/stock.csv), using the models in the spec sheet ~/sheet.pdf, to ~/short.csv with the columns rank,sku,joules,outlets,price_usd " +
			"(rank by joules, highest first, then price, lowest first, then SKU). Then write a short restock note to ~/note.md naming the SKU and quantity, and message Priya Mehta the SKU you ordered.",
		Rubric: []string{"The cart holds exactly 2 of the model Maya approved (white body, digital display) and nothing else."},
	}
	spec, err := readSpec(tk)
	if err != nil {
		t.Fatal(err)
	}
	if spec.requirements != "bom.md" || spec.sheet != "sheet.pdf" || !spec.thenSKU || spec.qty != 2 || spec.color != "white" {
		t.Fatalf("read %+v", *spec)
	}
	header := strings.Split("rank,sku,joules,outlets,price_usd", ",")
	right := []string{"1,RG8-1001,2700,8,149.99", "2,RG8-1002,2700,8,149.99", "3,PW8-2700,2700,8,189.99"}
	for name, tc := range map[string]struct {
		rows           []string
		files          map[string]string
		pass, verified bool
	}{
		"complete":       {right, map[string]string{"bom.md": bomText, "sheet.pdf": sheetText, "stock.csv": stockText}, true, true},
		"top row only":   {right[:1], map[string]string{"bom.md": bomText, "sheet.pdf": sheetText, "stock.csv": stockText}, false, true},
		"a wrong price":  {[]string{right[0], right[1], "3,PW8-2700,2700,8,179.99"}, map[string]string{"bom.md": bomText, "sheet.pdf": sheetText, "stock.csv": stockText}, false, true},
		"stocked listed": {append([]string{"1,RG8-1001,2700,8,149.99", "2,RG8-1002,2700,8,149.99", "3,PW10-2700,2700,10,169.99"}, "4,PW8-2700,2700,8,189.99"), map[string]string{"bom.md": bomText, "sheet.pdf": sheetText, "stock.csv": stockText}, false, true},
		"no spec sheet":  {right, map[string]string{"bom.md": bomText, "stock.csv": stockText}, false, false},
	} {
		r := &inspection{env: fakeEnv(t, tc.files), spec: spec}
		if err := r.readFiles(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.ref = r.files
		var rows [][]string
		for _, l := range tc.rows {
			rows = append(rows, strings.Split(l, ","))
		}
		r.eligible(context.Background(), rows, header)
		passed := len(r.fails) == 0 && len(r.unknown) == 0
		if passed != tc.pass || (len(r.unknown) == 0) != tc.verified {
			t.Errorf("%s: fails %v, unverified %v", name, r.fails, r.unknown)
		}
	}
}

// TestReadFilesKeepsFilesApart: one shell command reads every file, and a
// file that holds what looks like another file's header cannot pass for it.
func TestReadFilesKeepsFilesApart(t *testing.T) {
	spec := &spec{shortlist: "short.csv", note: "note.md", inventory: "stock.csv"}
	spoof := "Ordered 2\nshortlist 5\nFAKE!\n"
	r := &inspection{env: fakeEnv(t, map[string]string{"notes/logins.md": "shop: `u` `p`\n", "note.md": spoof, "short.csv": "rank,sku\n1,A-100\n"}), spec: spec}
	if err := r.readFiles(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.file(fileShortlist); got != "rank,sku\n1,A-100" {
		t.Errorf("shortlist %q", got)
	}
	if got, _ := r.file(fileNote); got != strings.TrimRight(spoof, "\n") {
		t.Errorf("note %q", got)
	}
	if _, err := r.file(fileInventory); err == nil {
		t.Error("a missing file was read")
	}
	if n := len(r.env.Traj.Steps); n != 1 {
		t.Errorf("%d shell commands, want 1", n)
	}
}

// TestShortlistReadLikeASpreadsheet: a byte-order mark, quoted fields and a
// blank line do not fail a right shortlist (the verifier reads it with
// Python's csv module and utf-8-sig), and a huge note does not cost the
// other files.
func TestShortlistReadLikeASpreadsheet(t *testing.T) {
	spec := &spec{shortlist: "short.csv", note: "note.md", inventory: "stock.csv", requirements: "bom.md", sheet: "sheet.pdf",
		columns: strings.Split("rank,sku,joules,outlets,price_usd", ","), rankDesc: "joules", rankAsc: "price", thenSKU: true}
	short := "\ufeffrank,sku,joules,outlets,price_usd\n1,\"RG8-1001\",2700,8,149.99\n\n2,RG8-1002,2700,8,149.99\n3,PW8-2700,2700,8,189.99\n"
	files := map[string]string{"short.csv": short, "note.md": strings.Repeat("x", 3<<20), "bom.md": bomText, "sheet.pdf": sheetText, "stock.csv": stockText,
		"notes/logins.md": "shop: `u` `p`\n"}
	r := &inspection{env: fakeEnv(t, files), spec: spec}
	if err := r.readFiles(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.file(fileNote); len(got) != maxFileRead {
		t.Errorf("the note was read as %d bytes, want it cut at %d", len(got), maxFileRead)
	}
	if _, err := r.file(fileShortlist); err != nil {
		t.Fatalf("a huge note cost the shortlist: %v", err)
	}
	r.ref = r.files
	r.shortlist(context.Background(), "RG8-1002")
	if len(r.fails) > 0 || len(r.unknown) > 0 {
		t.Errorf("a right shortlist failed: %v %v", r.fails, r.unknown)
	}
}

func TestRequirementsByLabel(t *testing.T) {
	u, o, j, err := requirements(bomText)
	if err != nil || u != 1 || o != 8 || j != 2000 {
		t.Fatalf("requirements = %d, %d, %d, %v", u, o, j, err)
	}
	if _, _, _, err := requirements("# nothing here\n- Colour: any\n"); err == nil {
		t.Error("requirements read from a file that states none")
	}
}
