package mcpbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// Self is the persona's sender name in the benchmark world.
const Self = "Alex Rivera"

// worldClock is the benchmark world's frozen clock, after every seeded message.
var worldClock = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// Thread ids the benchmark calls use: readThread is read by read_thread,
// writeThread receives send_message (so the read thread does not grow).
const (
	readThread  = "t-000"
	writeThread = "t-001"
)

var (
	firstNames = []string{"Maya", "Sam", "Priya", "Bob", "Lena", "Omar", "Jules", "Noah", "Ines", "Kofi", "Mei", "Tomas", "Ana", "Ravi", "Zoe", "Felix"}
	lastNames  = []string{"Chen", "Ortiz", "Nair", "Weller", "Fischer", "Haddad", "Moreau", "Berg", "Silva", "Mensah", "Tanaka", "Novak", "Costa", "Iyer", "Park", "Klein"}
	words      = strings.Fields(`ok sure thanks see you tomorrow at the office dinner friday lunch meeting call me when
you land flight booked hotel invoice sent project deadline moved to next week can we talk about budget review
draft attached please check numbers again sounds good running late ten minutes coffee train station parking
kids school pickup weekend plans hiking beach birthday party gift ideas restaurant reservation table for four`)
)

// writeWorld writes a world at dir whose messages database holds threads
// threads and msgs messages (deterministic from seed), as the service's
// schema creates them; it returns the database's size in bytes.
func writeWorld(ctx context.Context, dir string, threads, msgs int, seed uint64) (int64, error) {
	for _, d := range []string{world.DBDir, world.HomeDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return 0, err
		}
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: "bench-persona", Clock: worldClock.Format(time.RFC3339)}
	if err := world.WriteManifest(dir, m); err != nil {
		return 0, err
	}
	if err := world.WriteAccounts(dir, nil); err != nil {
		return 0, err
	}
	path := world.DBPath(dir, "messages")
	db, err := state.OpenDB(path, false)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	spec, err := service.Lookup("messages")
	if err != nil {
		return 0, err
	}
	for _, s := range spec.Schema() {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return 0, fmt.Errorf("schema: %w", err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rng := rand.New(rand.NewPCG(seed, 0x6d637062656e6368))
	name := func() string {
		return firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))]
	}
	start := worldClock.Add(-60 * 24 * time.Hour)
	members := make([][]string, threads)
	pid := 0
	for t := range threads {
		kind, title := "dm", ""
		people := []string{Self}
		if t%4 == 3 { // a quarter are groups of 3 to 6 others
			kind = "group"
			title = fmt.Sprintf("%s %s", words[rng.IntN(len(words))], words[rng.IntN(len(words))])
			for n := 3 + rng.IntN(4); len(people) < n+1; {
				if p := name(); !containsFold(people, p) {
					people = append(people, p)
				}
			}
		} else {
			for len(people) < 2 {
				if p := name(); !containsFold(people, p) {
					people = append(people, p)
				}
			}
			title = people[1]
		}
		members[t] = people
		if _, err := tx.ExecContext(ctx, `INSERT INTO threads (id, ext_id, title, kind, created_at) VALUES (?, ?, ?, ?, ?)`,
			t+1, fmt.Sprintf("t-%03d", t), title, kind, start.Add(time.Duration(t)*time.Hour).Format(time.DateTime)); err != nil {
			return 0, err
		}
		for i, p := range people {
			pid++
			role := ""
			if kind == "group" && i == 0 {
				role = "admin"
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO participants (id, thread_id, name, role) VALUES (?, ?, ?, ?)`, pid, t+1, p, role); err != nil {
				return 0, err
			}
		}
	}
	// Messages spread evenly over the threads (every thread gets
	// msgs/threads), in time order over the 60 days; the last 5% unread.
	seq := make([]int, threads)
	step := 60 * 24 * time.Hour / time.Duration(msgs+1)
	for i := range msgs {
		t := i % threads
		seq[t]++
		people := members[t]
		sender := people[rng.IntN(len(people))]
		var body strings.Builder
		for n := 4 + rng.IntN(40); n > 0; n-- {
			if body.Len() > 0 {
				body.WriteByte(' ')
			}
			body.WriteString(words[rng.IntN(len(words))])
		}
		read := 1
		if i >= msgs*95/100 && sender != Self {
			read = 0
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (id, thread_id, seq, sender, body, sent_at, is_read) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			i+1, t+1, seq[t], sender, body.String(), start.Add(time.Duration(i+1)*step).Format(time.DateTime), read); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	if err := db.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
