// Package service is the registry of the persona's MCP services: each
// service is its own package (internal/service/NAME) with its state in the
// world's db/NAME.sqlite; this package lists them for the runtime and the
// CLI, built by a plain function (no init-time registration).
package service

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/messages"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/support"
	"github.com/wildawm/wildawm/internal/service/tasks"
	"github.com/wildawm/wildawm/internal/world"
)

// Service is what every MCP service offers.
type Service interface {
	Server() *mcp.Server
	HTTPHandler() http.Handler
	RunStdio(ctx context.Context) error
	// Suspend waits for the calls in flight, closes the service's
	// databases and holds every new call until resume is called; the calls
	// that waited then fail (they were made in the world being replaced)
	// and later ones open the databases again. Whoever replaces a world's
	// files under a live service (an instance reset) brackets that with
	// Suspend.
	Suspend() (resume func())
	// Hold waits for the calls in flight and holds every new call until
	// release, when they go on: whoever copies a live world's files (a
	// snapshot) brackets that with Hold.
	Hold() (release func())
}

// Options open a service over one world.
type Options struct {
	// WorldDir is the world directory; the service uses db/NAME.sqlite
	// (and home/ where it references files).
	WorldDir string
	Clock    world.Clock
	// Self is the persona's name as the service shows it (a sender, an
	// organizer).
	Self string
	// SelfAddress is the persona's mail address; empty derives one from
	// Self ("Alex Rivera" -> "alex.rivera@mail.example").
	SelfAddress    string
	Logger         *slog.Logger
	SessionTimeout time.Duration
	// Ephemeral marks the world as a throwaway copy whose writes need not
	// survive a crash (no journal file, no fsync); see messages.Options.
	Ephemeral bool
}

func (o Options) selfAddress() string {
	if o.SelfAddress != "" {
		return o.SelfAddress
	}
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(o.Self)) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "."):
			b.WriteByte('.')
		}
	}
	local := strings.Trim(b.String(), ".")
	if local == "" {
		local = "me"
	}
	return local + "@mail.example"
}

// Spec describes one service. A built-in service's definition is compiled
// on first use (Compiled, Schema, ReadTool, Open), not by Lookup or All: a
// process that serves one service holds one definition (a compiled
// definition is a few hundred KiB of schemas and plans the garbage
// collector scans on every cycle).
type Spec struct {
	Name    string
	compile func() *engine.Compiled
}

// FromDefinition is the Spec of a service the engine serves from a
// compiled definition.
func FromDefinition(c *engine.Compiled) Spec {
	return Spec{Name: c.Def.Name, compile: func() *engine.Compiled { return c }}
}

// Compiled is the service's definition, compiled with its Go hooks.
func (s Spec) Compiled() *engine.Compiled { return s.compile() }

// Schema is the DDL of the service's database.
func (s Spec) Schema() []string { return s.compile().Def.Schema() }

// ReadTool is a read-only tool any world answers with no arguments (the
// live health check calls it).
func (s Spec) ReadTool() string { return s.compile().Def.HealthTool }

// Open serves the service over the world o names.
func (s Spec) Open(o Options) (Service, error) {
	return engine.New(s.compile(), engine.Options{WorldDir: o.WorldDir, Clock: o.Clock, Self: o.Self, SelfAddress: o.selfAddress(),
		Logger: o.Logger, SessionTimeout: o.SessionTimeout, Ephemeral: o.Ephemeral})
}

// All returns every built-in service, by name; their definitions are
// compiled when first used.
func All() []Spec {
	return []Spec{
		{"messages", messages.Compiled},
		{"calendar", calendar.Compiled},
		{"contacts", contacts.Compiled},
		{"mail", mail.Compiled},
		{"notes", notes.Compiled},
		{"payments", payments.Compiled},
		{"support", support.Compiled},
		{"tasks", tasks.Compiled},
	}
}

// CompileAll compiles every built-in service now, which registers their
// SQL functions with the SQLite driver. The driver's table of functions is
// not safe to change while another goroutine opens a connection (modernc
// reads it unlocked in Open), so a process that opens databases from
// several goroutines calls CompileAll before it starts them; a process
// that serves one service compiles only that one, when first used.
func CompileAll() {
	for _, s := range All() {
		s.Compiled()
	}
}

// Lookup returns the service named name.
func Lookup(name string) (Spec, error) {
	all := All()
	i := slices.IndexFunc(all, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		names := make([]string, len(all))
		for j, s := range all {
			names[j] = s.Name
		}
		return Spec{}, fmt.Errorf("unknown service %q; known: %s", name, strings.Join(names, ", "))
	}
	return all[i], nil
}
