package mcpbench

import (
	"bufio"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/world"
)

// BenchmarkServiceCall calls read calls of bench services (the services'
// test worlds) in process, over dbtool's stdio transport with the raw
// client, as `mcp serve --ephemeral` runs them: for CPU profiles of one
// call. MCPBENCH_WORLDS names a directory of worlds NAME/ to use instead
// of writing each service's test world, so that a build of another commit
// (a copy of this file in a worktree of it) reads the same worlds.
func BenchmarkServiceCall(b *testing.B) {
	ctx := context.Background()
	type call struct {
		tool string
		args map[string]any
	}
	var (
		listEvents   = call{"list_events", map[string]any{}}
		listEvents3  = call{"list_events", map[string]any{"limit": 3}}
		getEvent     = call{"get_event", map[string]any{"event": "evt-review"}}
		findFreeTime = call{"find_free_time", map[string]any{"duration_minutes": 60}}
		listTxs      = call{"list_transactions", map[string]any{"account": "chk-main"}}
		searchTxs    = call{"search_transactions", map[string]any{"query": "RENT"}}
		statement    = call{"get_statement", map[string]any{"account": "chk-main", "period": "2026-02"}}
	)
	for _, c := range []struct {
		name, service string
		// calls are called in turn, one per iteration: a mix of them
		// is what bench services does to each server.
		calls []call
	}{
		{"calendar/list_events", "calendar", []call{listEvents}},
		{"calendar/list_events_3", "calendar", []call{listEvents3}},
		{"calendar/get_event", "calendar", []call{getEvent}},
		{"calendar/find_free_time", "calendar", []call{findFreeTime}},
		{"calendar/mix", "calendar", []call{listEvents, getEvent, findFreeTime, listEvents3}},
		{"payments/list_transactions", "payments", []call{listTxs}},
		{"payments/search_transactions", "payments", []call{searchTxs}},
		{"payments/get_statement", "payments", []call{statement}},
		{"payments/mix", "payments", []call{{"list_accounts", map[string]any{}}, {"get_balance", map[string]any{"account": "chk-main"}}, listTxs, searchTxs, statement}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := serviceWorld(b, c.service)
			m, err := world.ReadManifest(dir)
			if err != nil {
				b.Fatal(err)
			}
			t, err := m.Time()
			if err != nil {
				b.Fatal(err)
			}
			spec, err := service.Lookup(c.service)
			if err != nil {
				b.Fatal(err)
			}
			svc, err := spec.Open(service.Options{WorldDir: dir, Clock: world.FixedClock(t), Self: "Alex", Ephemeral: true})
			if err != nil {
				b.Fatal(err)
			}
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- svc.Server().Run(context.Background(), &dbtool.StdioTransport{In: inR, Out: outW}) }()
			defer func() { inW.Close(); <-done; outR.Close(); outW.Close() }()
			rc := &rawStdio{in: inW, out: bufio.NewReaderSize(outR, 64<<10)}
			msg, _, err := rc.roundTrip(0, rawMessage(0, "initialize", initializeParams()))
			if err == nil {
				_, err = checkResponse(msg, 0)
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := inW.Write(append(rawMessage(-1, "notifications/initialized", nil), '\n')); err != nil {
				b.Fatal(err)
			}
			var id int64
			cpu0 := cpuTime()
			for b.Loop() {
				cl := c.calls[id%int64(len(c.calls))]
				id++
				msg, _, err := rc.call(ctx, id, cl.tool, cl.args)
				if err == nil {
					_, err = checkResponse(msg, id)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			// CPU time moves far less than latency does on a small
			// machine, where a call's wall time is mostly waiting for the
			// other goroutine to be scheduled.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serviceWorld returns a copy of the service's test world, from
// MCPBENCH_WORLDS/NAME when set (written there first if missing).
func serviceWorld(b *testing.B, name string) string {
	dir := filepath.Join(b.TempDir(), name)
	src := os.Getenv("MCPBENCH_WORLDS")
	if src == "" {
		src = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(src, name)); err != nil {
		spec, err := service.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := writeServiceWorld(context.Background(), filepath.Join(src, name), spec); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(src, name))); err != nil {
		b.Fatal(err)
	}
	return dir
}

// TestServicesAgainstBaseline is bench services for some services or
// cases: MCPBENCH_BINARY and MCPBENCH_BASELINE name the two wildawm
// executables, MCPBENCH_ONLY a comma-separated list of services and
// service/tool cases (ServicesOptions.Only), MCPBENCH_CALLS the timed
// calls per case (default 300). Skipped unless the two are named.
func TestServicesAgainstBaseline(t *testing.T) {
	bin, base := os.Getenv("MCPBENCH_BINARY"), os.Getenv("MCPBENCH_BASELINE")
	if bin == "" || base == "" {
		t.Skip("set MCPBENCH_BINARY and MCPBENCH_BASELINE to two wildawm executables")
	}
	calls, _ := strconv.Atoi(os.Getenv("MCPBENCH_CALLS"))
	var only []string
	if s := os.Getenv("MCPBENCH_ONLY"); s != "" {
		only = strings.Split(s, ",")
	}
	rep, err := RunServices(context.Background(), ServicesOptions{Binary: bin, Baseline: base, Calls: cmp.Or(calls, 300), Warmup: 20,
		Scripts: filepath.Join("..", "service", "testdata", "scripts"), Only: only})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Markdown())
}
