package service_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/messages"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/service/support"
	"github.com/wildawm/wildawm/internal/service/tasks"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// goldenWorld is a service's test world: its database (and, for mail, the
// home files its attachments name; for support, the shop's orders).
type goldenWorld struct {
	clock       func() world.Clock
	self, addr  string
	sql         func() []string
	files       map[string]string
	otherTables map[string][]string
}

var goldenWorlds = map[string]goldenWorld{
	"calendar": {clock: calendar.TestClock, self: calendar.TestSelf, sql: calendar.TestSQL},
	"contacts": {clock: contacts.TestClock, self: contacts.TestSelf, sql: contacts.TestSQL},
	"mail":     {clock: mail.TestClock, self: mail.TestSelf, addr: mail.TestSelfAddress, sql: mail.TestSQL, files: mail.TestFiles()},
	"messages": {clock: messages.TestClock, self: messages.TestSelf, sql: messages.TestSQL},
	"notes":    {clock: notes.TestClock, self: notes.TestSelf, sql: notes.TestSQL},
	"payments": {clock: payments.TestClock, self: "Alex", sql: payments.TestSQL},
	"support":  {clock: support.TestClock, self: "Alex", sql: support.TestSQL, otherTables: map[string][]string{shop.DBName: append(shop.Schema(), support.TestShopRows()...)}},
	"tasks":    {clock: tasks.TestClock, self: "Alex", sql: tasks.TestSQL},
}

// TestGoldenTranscripts runs testdata/scripts/NAME.json against every
// service over memory and HTTP, each on a fresh copy of its test world, and
// compares the answers (instructions, tools, templates, every result and
// error, the database hash after every step) with
// testdata/golden/NAME.json. Rewrite with -update.
func TestGoldenTranscripts(t *testing.T) {
	for _, spec := range service.All() {
		if spec.Compiled != nil {
			continue // TestSuite runs its script and golden transcript
		}
		t.Run(spec.Name, func(t *testing.T) {
			script := filepath.Join("testdata", "scripts", spec.Name+".json")
			if _, err := os.Stat(script); err != nil {
				t.Skipf("no script: %v", err)
			}
			gw, ok := goldenWorlds[spec.Name]
			if !ok {
				t.Fatalf("no test world for %s in goldenWorlds", spec.Name)
			}
			steps := servicetest.LoadSteps(t, script)
			for _, tr := range servicetest.Transports() {
				t.Run(tr.Name, func(t *testing.T) {
					sqls := map[string][]string{spec.Name: gw.sql()}
					for db, s := range gw.otherTables {
						sqls[db] = s
					}
					dir := state.MakeTestWorld(t, t.TempDir(), state.TestWorld{SQL: sqls, Files: gw.files})
					svc, err := spec.Open(service.Options{WorldDir: dir, Clock: gw.clock(), Self: gw.self, SelfAddress: gw.addr})
					if err != nil {
						t.Fatal(err)
					}
					got := servicetest.Record(t, svc, tr.Connect, world.DBPath(dir, spec.Name), steps)
					servicetest.Golden(t, filepath.Join("testdata", "golden", spec.Name+".json"), got)
				})
			}
		})
	}
}
