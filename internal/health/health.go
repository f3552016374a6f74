package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/world"
)

// Version is the report format's version.
const Version = 1

// Report is the live health of one world state.
type Report struct {
	Version  int       `json:"version"`
	Snapshot world.ID  `json:"snapshot"`
	OK       bool      `json:"ok"`
	Accounts []Account `json:"accounts"`
	Services []Service `json:"services"`
	// Problems has one line per failure, naming the account or service and
	// the fix.
	Problems []string `json:"problems"`
}

// Account is the check of one declared account.
type Account struct {
	Site     string `json:"site"`
	Username string `json:"username"`
	// CredentialsFoundIn is where in the home directory the password was
	// found ("notes/logins.md:1"), empty when it was not.
	CredentialsFoundIn string `json:"credentials_found_in"`
	LoggedIn           bool   `json:"logged_in"`
	// HistoryOK is set when the account's history pages rendered and list
	// what the world's database holds.
	HistoryOK bool `json:"history_ok"`
	// Error joins this account's problems; empty when it passed.
	Error string `json:"error,omitempty"`
}

// OK reports whether the account passed every check.
func (a *Account) OK() bool {
	return a.Error == "" && a.CredentialsFoundIn != "" && a.LoggedIn && a.HistoryOK
}

// Service is the check of one active MCP service.
type Service struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools"`
	OK    bool     `json:"ok"`
	Error string   `json:"error,omitempty"`
}

// Encode returns the report as indented JSON with a final newline.
func (r *Report) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode health report: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	verdict := "healthy"
	if !r.OK {
		verdict = fmt.Sprintf("NOT healthy (%d problems)", len(r.Problems))
	}
	fmt.Fprintf(&b, "world %s: %s\n", r.Snapshot.Short(), verdict)
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "no"
	}
	for _, a := range r.Accounts {
		found := a.CredentialsFoundIn
		if found == "" {
			found = "-"
		}
		fmt.Fprintf(&b, "  account %s/%s: credentials %s, logged in %s, history %s\n", a.Site, a.Username, found, yes(a.LoggedIn), yes(a.HistoryOK))
	}
	for _, s := range r.Services {
		fmt.Fprintf(&b, "  service %s: loads %s, tools %s\n", s.Name, yes(s.OK), strings.Join(s.Tools, ", "))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// serviceProbe is how an instance serves one MCP service.
type serviceProbe struct {
	// endpoint is the service's streamable-HTTP endpoint in inst.
	endpoint func(inst *runtime.Instance) string
	// readTool is a read-only tool that any world can answer.
	readTool string
	// load builds the service over the world at dir, as the instance does.
	load func(dir string, clock world.Clock, self string) error
}

// serviceProbes lists the MCP services an instance of the world at dir
// serves, by database name, at /mcp/NAME: every service of the registry
// and the definitions its manifest names (found in lib).
func serviceProbes(dir string, lib *service.Library) (map[string]serviceProbe, error) {
	m, err := world.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	specs, err := service.ForWorld(m, lib)
	if err != nil {
		return nil, err
	}
	out := map[string]serviceProbe{}
	for _, spec := range specs {
		out[spec.Name] = serviceProbe{
			endpoint: func(inst *runtime.Instance) string { return inst.MCPURL + "/" + spec.Name },
			readTool: spec.ReadTool(),
			load: func(dir string, clock world.Clock, self string) error {
				_, err := spec.Open(service.Options{WorldDir: dir, Clock: clock, Self: self})
				return err
			},
		}
	}
	return out, nil
}

// siteDBs lists the database names of the sites an instance serves.
func siteDBs() []string {
	var names []string
	for _, s := range site.All() {
		names = append(names, s.Name)
	}
	return names
}

// checker holds one Check's state.
type checker struct {
	env      *rollout.Env
	snapshot world.ID
	rep      *Report
}

func (c *checker) accountProblem(a *Account, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if a.Error != "" {
		a.Error += "; "
	}
	a.Error += msg
	c.rep.Problems = append(c.rep.Problems, fmt.Sprintf("account %s/%s: %s", a.Site, a.Username, msg))
}

func (c *checker) serviceProblem(s *Service, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.OK = false
	if s.Error != "" {
		s.Error += "; "
	}
	s.Error += msg
	c.rep.Problems = append(c.rep.Problems, fmt.Sprintf("service %s: %s", s.Name, msg))
}

func (c *checker) worldProblem(format string, args ...any) {
	c.rep.Problems = append(c.rep.Problems, "world: "+fmt.Sprintf(format, args...))
}

// Check boots a fresh instance of snapshot in env and checks its live
// health. A world that fails a check is a report with OK false; the error
// is only for failures of the harness.
func Check(ctx context.Context, env *rollout.Env, snapshot world.ID) (*Report, error) {
	c := &checker{env: env, snapshot: snapshot, rep: &Report{
		Version: Version, Snapshot: snapshot,
		Accounts: []Account{}, Services: []Service{}, Problems: []string{},
	}}
	// A snapshot that cannot be materialised is the harness's failure.
	if _, err := env.Materializer.Lower(ctx, snapshot); err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	name, err := c.instanceName()
	if err != nil {
		return nil, err
	}
	inst, err := env.Start(ctx, snapshot, name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := c.diagnose(ctx, name+"-diagnose", err); err != nil {
			return nil, err
		}
		return c.finish(), nil
	}
	defer inst.Close(context.WithoutCancel(ctx))
	if err := c.checkLive(ctx, inst); err != nil {
		return nil, err
	}
	return c.finish(), nil
}

// instanceName reserves a fresh instance name under the work directory, so
// that checks of one snapshot may run side by side.
func (c *checker) instanceName() (string, error) {
	parent := filepath.Join(c.env.WorkDir, "instances")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("health: %w", err)
	}
	d, err := os.MkdirTemp(parent, "health-"+c.snapshot.Short()+"-")
	if err != nil {
		return "", fmt.Errorf("health: %w", err)
	}
	return filepath.Base(d), nil
}

func (c *checker) finish() *Report {
	ok := len(c.rep.Problems) == 0
	for i := range c.rep.Accounts {
		ok = ok && c.rep.Accounts[i].OK()
	}
	for _, s := range c.rep.Services {
		ok = ok && s.OK
	}
	c.rep.OK = ok
	return c.rep
}

// checkLive runs every check on a booted instance.
func (c *checker) checkLive(ctx context.Context, inst *runtime.Instance) error {
	accts, err := world.ReadAccounts(inst.Dir())
	if err != nil {
		c.worldProblem("%v; fix accounts.json (docs/world.md)", err)
	}
	for _, a := range accts {
		ra := Account{Site: a.Site, Username: a.Username}
		if err := c.checkAccount(ctx, inst, a, &ra); err != nil {
			return err
		}
		c.rep.Accounts = append(c.rep.Accounts, ra)
	}
	names, err := serviceDBs(inst.Dir(), accts)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	probes, err := serviceProbes(inst.Dir(), c.env.Services)
	if err != nil {
		c.worldProblem("%v", err)
	}
	for _, name := range names {
		s := Service{Name: name, Tools: []string{}}
		p, ok := probes[name]
		if !ok {
			c.serviceProblem(&s, "db/%s%s has no MCP server in the instance; fix: add the service's server (an overlay) or remove the database", name, world.DBExt)
		} else if err := c.checkMCP(ctx, p.endpoint(inst), p.readTool, &s); err != nil {
			return err
		}
		c.rep.Services = append(c.rep.Services, s)
	}
	return nil
}

// checkAccount finds a's credentials in the workspace and logs in with
// them on its site.
func (c *checker) checkAccount(ctx context.Context, inst *runtime.Instance, a world.Account, ra *Account) error {
	cred, err := findCredentials(ctx, inst.Shell, a)
	if err != nil {
		return err
	}
	_, isKit := site.Kit(a.Site)
	served := a.Site == shop.SiteName || isKit
	noLogin := ""
	if served {
		noLogin = ", so the account cannot log in"
	}
	switch {
	case cred.found():
		ra.CredentialsFoundIn = cred.where
	case len(cred.mentions) == 0:
		c.accountProblem(ra, "the credentials are not discoverable in the workspace: no file in home mentions the username%s; fix: write the username and password into a notes file (e.g. home/notes/logins.md)", noLogin)
	default:
		c.accountProblem(ra, "%s mentions the username but no password next to it matches the stored hash%s; fix: correct the password in the note (or the account in accounts.json)", strings.Join(cred.mentions, ", "), noLogin)
	}
	if !served {
		c.accountProblem(ra, "no site server for %s; fix: add the site's server (an overlay) or remove the account from accounts.json", a.Site)
		return nil
	}
	if !cred.found() {
		return nil
	}
	if spec, ok := site.Kit(a.Site); ok {
		return c.checkKit(ctx, inst, spec, a.Username, cred.password, ra)
	}
	return c.checkShop(ctx, inst, a.Username, cred.password, ra)
}

// serviceDBs lists the world's databases that are no site's and no
// provenance database (world.IsProvenance): the active MCP services.
func serviceDBs(dir string, accts []world.Account) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, world.DBDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sites := siteDBs()
	for _, a := range accts {
		sites = append(sites, a.Site)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), world.DBExt)
		if !ok || e.IsDir() || slices.Contains(sites, name) || world.IsProvenance(name) {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// diagnose runs when the instance does not boot: it loads each site and
// service on a scratch copy of the world to name the one that fails.
func (c *checker) diagnose(ctx context.Context, name string, bootErr error) error {
	dir := filepath.Join(c.env.WorkDir, "instances", name)
	ri, err := c.env.Materializer.New(ctx, c.snapshot, dir)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer ri.Close(context.WithoutCancel(ctx))
	found := false
	accts, err := world.ReadAccounts(ri.Dir())
	if err != nil {
		found = true
		c.worldProblem("%v; fix accounts.json (docs/world.md)", err)
	}
	m, err := world.ReadManifest(ri.Dir())
	if err != nil {
		c.worldProblem("the world does not boot: %v; fix manifest.json (docs/world.md)", err)
		c.notChecked(accts)
		return nil
	}
	t, err := m.Time()
	if err != nil {
		c.worldProblem("the world does not boot: %v; fix the manifest's clock", err)
		c.notChecked(accts)
		return nil
	}
	site, err := shop.New(shop.Options{CatalogDir: c.env.CatalogDir, WorldDir: ri.Dir(), Clock: world.FixedClock(t)})
	if err != nil {
		found = true
		msg := strings.ReplaceAll(err.Error(), ri.Dir()+string(filepath.Separator), "")
		c.worldProblem("the shop site does not load, so the world does not boot: %s; fix the catalog directory or db/%s%s", msg, shop.DBName, world.DBExt)
	} else {
		site.Close()
	}
	names, err := serviceDBs(ri.Dir(), accts)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	probes, err := serviceProbes(ri.Dir(), c.env.Services)
	if err != nil {
		c.worldProblem("%v", err)
	}
	for _, name := range names {
		s := Service{Name: name, Tools: []string{}}
		p, ok := probes[name]
		switch {
		case !ok:
			c.serviceProblem(&s, "db/%s%s has no MCP server in the instance; fix: add the service's server (an overlay) or remove the database", name, world.DBExt)
		default:
			if err := p.load(ri.Dir(), world.FixedClock(t), c.env.Self); err != nil {
				found = true
				// Name the database as it is in the world, not in the scratch copy.
				msg := strings.ReplaceAll(err.Error(), ri.Dir()+string(filepath.Separator), "")
				c.serviceProblem(&s, "does not load, so the world does not boot: %s; fix db/%s%s so that it has the service's tables and columns (docs/services/%s.md)", msg, name, world.DBExt, name)
			} else {
				s.Error = "not checked: the world does not boot"
			}
		}
		c.rep.Services = append(c.rep.Services, s)
	}
	if !found {
		c.worldProblem("the world does not boot: %v", bootErr)
	}
	c.notChecked(accts)
	return nil
}

// notChecked records accts as unchecked because the world did not boot.
func (c *checker) notChecked(accts []world.Account) {
	for _, a := range accts {
		c.rep.Accounts = append(c.rep.Accounts, Account{Site: a.Site, Username: a.Username, Error: "not checked: the world does not boot"})
	}
}
