package health_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/health"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/taskgen/casestudytest"
	"github.com/wildawm/wildawm/internal/world"
)

func needTools(t *testing.T) {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
}

const logins = "notes/logins.md"

// TestCheck builds the case-study world, checks that W0 is healthy, then
// breaks copies of it and checks that each break is reported.
func TestCheck(t *testing.T) {
	needTools(t)
	ctx := context.Background()
	// The sandbox uid must be able to reach the instances: keep them under
	// a searchable directory of the system's temporary directory.
	runDir, err := os.MkdirTemp("", "wildawm-health-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runDir) })
	p := casestudytest.New(t, runDir)
	defer p.Close()
	w0 := p.W0()

	rep, err := health.Check(ctx, p.Env, w0)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Problems) != 0 {
		t.Fatalf("W0 is not healthy:\n%s", encode(t, rep))
	}
	// The persona's accounts: the shop's and three kit sites' (recipes,
	// stays, maps), each logged in with the note's password and its
	// history pages listing what the world holds.
	sites := []string{}
	for _, a := range rep.Accounts {
		sites = append(sites, a.Site)
		if !strings.HasPrefix(a.CredentialsFoundIn, logins+":") || !a.LoggedIn || !a.HistoryOK {
			t.Errorf("%s account: %+v", a.Site, a)
		}
	}
	if !slices.Equal(sites, []string{"maps", "recipes", "shop", "stays"}) {
		t.Fatalf("accounts %+v, want the persona's shop, recipes, stays and maps accounts", rep.Accounts)
	}
	// The case study uses all eight MCP services; each loads and answers.
	if len(rep.Services) != 8 {
		t.Errorf("services: %+v, want the case study's eight", rep.Services)
	}
	for _, sv := range rep.Services {
		if !sv.OK || len(sv.Tools) == 0 {
			t.Errorf("service %s: %+v", sv.Name, sv)
		}
	}
	if i := slices.IndexFunc(rep.Services, func(s health.Service) bool { return s.Name == "messages" }); i < 0 || !slices.Contains(rep.Services[i].Tools, "list_threads") {
		t.Errorf("messages: %+v", rep.Services)
	}
	user := rep.Accounts[slices.IndexFunc(rep.Accounts, func(a health.Account) bool { return a.Site == "shop" })].Username
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "healthy") {
		t.Errorf("text report %q, %v", text.String(), err)
	}

	// broken snapshots a copy of W0 changed by edit.
	broken := func(t *testing.T, edit func(dir string)) *health.Report {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "w")
		if err := p.Store.Checkout(ctx, w0, dir); err != nil {
			t.Fatal(err)
		}
		edit(dir)
		id, err := rollout.SnapshotWorld(ctx, p.Store, dir, w0)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := health.Check(ctx, p.Env, id)
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK {
			t.Fatalf("a broken world is healthy:\n%s", encode(t, rep))
		}
		t.Logf("problems: %q", rep.Problems)
		return rep
	}
	editNote := func(t *testing.T, dir string, edit func(string) string) {
		t.Helper()
		path := filepath.Join(dir, world.HomeDir, logins)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	account := func(t *testing.T, rep *health.Report, site string) health.Account {
		t.Helper()
		for _, a := range rep.Accounts {
			if a.Site == site {
				return a
			}
		}
		t.Fatalf("no %s account in %+v", site, rep.Accounts)
		return health.Account{}
	}
	hasProblem := func(t *testing.T, rep *health.Report, parts ...string) {
		t.Helper()
		for _, p := range rep.Problems {
			if !slices.ContainsFunc(parts, func(s string) bool { return !strings.Contains(p, s) }) {
				return
			}
		}
		t.Errorf("no problem mentions %q: %q", parts, rep.Problems)
	}

	t.Cleanup(func() {
		left, _ := os.ReadDir(filepath.Join(runDir, "instances"))
		for _, e := range left {
			t.Errorf("instance %s left behind", e.Name())
		}
	})

	t.Run("logins note removed", func(t *testing.T) {
		rep := broken(t, func(dir string) {
			if err := os.Remove(filepath.Join(dir, world.HomeDir, logins)); err != nil {
				t.Fatal(err)
			}
		})
		a := account(t, rep, "shop")
		if a.CredentialsFoundIn != "" || a.LoggedIn || a.HistoryOK {
			t.Errorf("shop account: %+v", a)
		}
		hasProblem(t, rep, "account shop/"+user, "not discoverable")
	})
	t.Run("wrong password in the note", func(t *testing.T) {
		rep := broken(t, func(dir string) {
			editNote(t, dir, func(s string) string {
				return strings.Replace(s, "password `", "password `wrong-", 1)
			})
		})
		a := account(t, rep, "shop")
		if a.CredentialsFoundIn != "" || a.LoggedIn {
			t.Errorf("shop account: %+v", a)
		}
		hasProblem(t, rep, "account shop/"+user, logins, "no password next to it matches")
	})
	t.Run("messages table missing", func(t *testing.T) {
		rep := broken(t, func(dir string) {
			db, err := state.OpenDB(world.DBPath(dir, "messages"), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`DROP TABLE participants`); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
		i := slices.IndexFunc(rep.Services, func(s health.Service) bool { return s.Name == "messages" })
		if i < 0 || rep.Services[i].OK {
			t.Fatalf("services: %+v", rep.Services)
		}
		hasProblem(t, rep, "service messages", "does not load", "db/messages.sqlite", "participants")
		for _, p := range rep.Problems {
			if strings.Contains(p, runDir) {
				t.Errorf("a problem names the scratch copy: %q", p)
			}
		}
		if a := account(t, rep, "shop"); a.LoggedIn || !strings.Contains(a.Error, "not checked") {
			t.Errorf("shop account of a world that does not boot: %+v", a)
		}
	})
	t.Run("service without a server", func(t *testing.T) {
		rep := broken(t, func(dir string) {
			db, err := state.OpenDB(world.DBPath(dir, "fitness"), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE)`); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
		i := slices.IndexFunc(rep.Services, func(s health.Service) bool { return s.Name == "fitness" })
		if i < 0 || rep.Services[i].OK {
			t.Fatalf("services: %+v", rep.Services)
		}
		hasProblem(t, rep, "service fitness", "no MCP server")
		if len(rep.Problems) != 1 {
			t.Errorf("problems %q, want only the fitness one", rep.Problems)
		}
	})
	t.Run("account without a site server", func(t *testing.T) {
		rep := broken(t, func(dir string) {
			accts, err := world.ReadAccounts(dir)
			if err != nil {
				t.Fatal(err)
			}
			accts = append(accts, world.Account{Site: "bakery", Username: "alex.cooks", PasswordHash: world.HashPassword("bakery", "alex.cooks", "test", "basil-77")})
			if err := world.WriteAccounts(dir, accts); err != nil {
				t.Fatal(err)
			}
			editNote(t, dir, func(s string) string { return s + "- bakery: user `alex.cooks`, password `basil-77`\n" })
		})
		r := account(t, rep, "bakery")
		if !strings.HasPrefix(r.CredentialsFoundIn, logins+":") || r.LoggedIn {
			t.Errorf("bakery account: %+v", r)
		}
		hasProblem(t, rep, "account bakery/alex.cooks", "no site server for bakery")
		if s := account(t, rep, "shop"); !s.OK() {
			t.Errorf("the shop account broke too: %+v", s)
		}
		if len(rep.Problems) != 1 {
			t.Errorf("problems %q, want only the bakery one", rep.Problems)
		}
	})
	t.Run("kit site history that does not render", func(t *testing.T) {
		rep := broken(t, func(dir string) {
			db, err := state.OpenDB(world.DBPath(dir, "stays"), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`DROP TABLE bookings`); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
		if a := account(t, rep, "stays"); !a.LoggedIn || a.HistoryOK {
			t.Errorf("stays account: %+v, want logged in and the history failing", a)
		}
		hasProblem(t, rep, "account stays/", "bookings")
		if s := account(t, rep, "recipes"); !s.OK() {
			t.Errorf("the recipes account broke too: %+v", s)
		}
	})
}

func encode(t *testing.T, rep *health.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
