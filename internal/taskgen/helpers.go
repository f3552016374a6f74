package taskgen

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/task"
)

// Helpers every family file shares: reading the world, quoting values into
// criteria and scripts, making task IDs.

// hasTable reports whether the world's database db has table.
func hasTable(w *World, db, table string) bool {
	rows, err := w.Query(db, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table)
	return err == nil && len(rows) == 1 && num(rows[0][0]) == 1
}

// count runs a count(*) query on the world's database db.
func count(w *World, db, q string, args ...any) (int64, error) {
	rows, err := w.Query(db, q, args...)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("taskgen: %s: %d rows for a count", db, len(rows))
	}
	return num(rows[0][0]), nil
}

// sqlText is s as an SQL string literal.
func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// worldNow is the world's clock.
func worldNow(w *World) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, w.Manifest.Clock)
	if err != nil {
		return time.Time{}, fmt.Errorf("taskgen: the world's clock %q: %w", w.Manifest.Clock, err)
	}
	return t.UTC(), nil
}

func provenance(w *World) task.Provenance {
	return task.Provenance{Persona: w.Manifest.Persona, Day: w.Manifest.Day, Snapshot: w.Snapshot, Catalog: w.Manifest.Catalog}
}

// rawInt is n as a criterion's expected value.
func rawInt(n int64) json.RawMessage { return json.RawMessage(strconv.FormatInt(n, 10)) }

// rawJSON is v as a criterion's expected value.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain data always marshals
	}
	return b
}

// pyJSON is v as a Python expression (parsed from JSON at run time), for
// scripts that embed authored data.
func pyJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return "json.loads(" + strconv.Quote(string(b)) + ")"
}

// idPart is s made fit for a task id: lowercase letters and digits with
// single dashes.
func idPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// taskID joins parts into a task id of at most 64 bytes.
func taskID(parts ...string) string {
	var ps []string
	for _, p := range parts {
		if p = idPart(p); p != "" {
			ps = append(ps, p)
		}
	}
	id := strings.Join(ps, "-")
	if len(id) > 64 {
		// Cut, but keep what was cut apart: a hash of the whole.
		h := fnv.New32a()
		h.Write([]byte(id))
		suffix := fmt.Sprintf("-%08x", h.Sum32())
		id = strings.TrimRight(id[:64-len(suffix)], "-") + suffix
	}
	return id
}

// yesNo is the decision tables' boolean.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// factOf is a fact of kind whose value and forms are pairs (the value as
// later steps carry it, the wrong one in its place), the value first;
// give the most specific pairs first (a departure time before its day).
// A pair the mistake leaves alone is dropped, and so is one whose value
// an earlier pair's wrong carries (replacing it would rewrite that
// replacement). ok is false when no pair is left for a read or a choice
// (a mistake that changes nothing is no fact); an output keeps its first
// pair then (a lucky guess: the computing step is still left out).
func factOf(id, kind, cue string, pairs ...task.Form) (f task.Fact, ok bool) {
	var kept []task.Form
	for _, p := range pairs {
		if p.Value == "" || p.Value == p.Wrong {
			continue
		}
		chained := false
		for _, k := range kept {
			chained = chained || strings.Contains(k.Wrong, p.Value)
		}
		if !chained {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		if kind != task.FactOutput || len(pairs) == 0 || pairs[0].Value == "" {
			return task.Fact{}, false
		}
		kept = pairs[:1]
	}
	return task.Fact{ID: id, Kind: kind, Value: kept[0].Value, Wrong: kept[0].Wrong, Cue: cue, Forms: kept[1:]}, true
}
