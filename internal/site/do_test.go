package site_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/recipes"
	"github.com/wildawm/wildawm/internal/site/stays"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestDoWritesHistory: the synthesis API writes what the forms write, at
// the time it is given, and refuses what the forms refuse without a
// change.
func TestDoWritesHistory(t *testing.T) {
	ctx := context.Background()
	cat := builtCatalog(t)
	rs, ss := recipes.Spec(), stays.Spec()
	w := kit.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), rs, ss)
	open := func(sp *kit.Spec) *kit.Site {
		s, err := kit.New(sp, kit.Options{WorldDir: w, CatalogDir: cat})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	r, h := open(rs), open(ss)
	rdb, _ := r.Catalog()
	var slug string
	if err := rdb.QueryRow(`SELECT slug FROM recipes ORDER BY id LIMIT 1`).Scan(&slug); err != nil {
		t.Fatal(err)
	}
	if err := r.Do(ctx, "save", kit.TestUser, slug, map[string]string{"note": "for Friday"}, "2026-01-05 10:00:00"); err != nil {
		t.Fatal(err)
	}
	db, _ := h.Catalog()
	var hotel, room string
	if err := db.QueryRow(`SELECT h.slug, r.id || ' ' || r.kind || ' (up to ' || r.max_guests || ' guests)' FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id
		WHERE NOT EXISTS (SELECT 1 FROM room_rates x WHERE x.room_id = r.id AND x.night BETWEEN '2026-03-10' AND '2026-03-11' AND x.available = 0) ORDER BY r.id LIMIT 1`).Scan(&hotel, &room); err != nil {
		t.Fatal(err)
	}
	if err := h.Do(ctx, "book", kit.TestUser, hotel, map[string]string{"room": room, "check_in": "2026-03-10", "nights": "2", "guests": "1"}, "2026-01-03 08:15:00"); err != nil {
		t.Fatal(err)
	}
	wdb, err := state.OpenDB(world.DBPath(w, stays.Name), true)
	if err != nil {
		t.Fatal(err)
	}
	defer wdb.Close()
	var at, status string
	var total int64
	if err := wdb.QueryRow(`SELECT booked_at, status, total_cents FROM bookings WHERE username = ?`, kit.TestUser).Scan(&at, &status, &total); err != nil {
		t.Fatal(err)
	}
	if at != "2026-01-03 08:15:00" || status != "confirmed" || total <= 0 {
		t.Errorf("booking = %s %s %d", at, status, total)
	}
	before, _ := state.Hash(ctx, w)
	for _, bad := range []struct {
		name, key string
		in        map[string]string
		want      string
	}{
		{"book", hotel, map[string]string{"room": room, "check_in": "2026-03-10", "nights": "99", "guests": "1"}, "Nights must be"},
		{"book", hotel, map[string]string{"room": "1 Penthouse", "check_in": "2026-03-10", "nights": "1", "guests": "1"}, "not one of the choices"},
		{"book", hotel, map[string]string{"room": room, "check_in": "2027-06-01", "nights": "1", "guests": "1"}, "not free every night"},
		{"book", "no-such-hotel", map[string]string{}, "no hotel"},
		{"fly", hotel, nil, `no action "fly"`},
	} {
		if err := h.Do(ctx, bad.name, kit.TestUser, bad.key, bad.in, "2026-01-03 08:20:00"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Do %s %v: %v, want %q", bad.name, bad.in, err, bad.want)
		}
	}
	if after, _ := state.Hash(ctx, w); after != before {
		t.Error("refused Do calls changed the world")
	}
}
