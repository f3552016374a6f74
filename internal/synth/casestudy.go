package synth

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// CaseStudyCandidates are the case study's two look-alike surge
// protectors, the approved one first.
func CaseStudyCandidates() [2]string {
	return [2]string{catalog.CandidateWhite, catalog.CandidateBlack}
}

// CaseStudyRows turns the catalog's surge protectors into the spec
// sheet's rows, and picks a cable as the persona's earlier purchase.
func CaseStudyRows(ps []catalog.Product) ([]SpecRow, OrderItem) {
	var rows []SpecRow
	var filler OrderItem
	for _, p := range ps {
		if p.Category != catalog.CategorySurge {
			if filler.SKU == "" && p.Category == "cables" {
				filler = OrderItem{SKU: p.SKU, Qty: 4, PriceCents: int(p.PriceCents)}
			}
			continue
		}
		j, _ := p.Specs.Int("joules")
		o, _ := p.Specs.Int("outlets")
		u, _ := p.Specs.Int("rack_units")
		rows = append(rows, SpecRow{SKU: p.SKU, Title: p.Title, Joules: int(j), Outlets: int(o), RackUnits: int(u), PriceCents: int(p.PriceCents)})
	}
	if filler.SKU == "" {
		for _, p := range ps {
			if p.Category != catalog.CategorySurge {
				filler = OrderItem{SKU: p.SKU, Qty: 1, PriceCents: int(p.PriceCents)}
				break
			}
		}
	}
	return rows, filler
}

// CaseStudyInput is what the case study's authoring (CaseStudyTask) reads
// of its world: the persona, the spec sheet's models, the look-alikes and
// the shop login, for the task on day of snapshot.
func CaseStudyInput(day int, snapshot, catalogID world.ID) TaskInput {
	p := CaseStudyPersona()
	rows, _ := CaseStudyRows(catalog.Products())
	return TaskInput{Persona: p, Day: day, Snapshot: snapshot, Catalog: catalogID, Rows: rows, Candidates: CaseStudyCandidates(),
		ShopUser: p.Accounts[0].Username, ShopPass: p.Accounts[0].Password}
}

// CaseStudy grows the paper's case-study persona's world (CaseStudyPlan
// with its web history, days 0..4) into the run, as a persona of its own,
// beside a snapshot of the run's catalog:
// its bible, and each day's plan, delta and done.json, every day through
// Grow's lint, replay and produces checks into the run's store. It is
// deterministic: growing it again gives the same snapshots.
func (r *Run) CaseStudy(ctx context.Context, progress func(format string, args ...any)) ([]GrownDay, error) {
	p := CaseStudyPersona()
	catDir := filepath.Join(r.Dir, "catalog")
	rows, filler := CaseStudyRows(catalog.Products())
	picks, err := caseStudyPicks(ctx, catDir)
	if err != nil {
		return nil, fmt.Errorf("synth: case study: catalog: %w", err)
	}
	plan, err := AddWebHistory(CaseStudyPlan(p, rows, CaseStudyCandidates(), filler), p, picks)
	if err != nil {
		return nil, err
	}
	// The catalog the task's provenance names is in the store beside the
	// worlds (a snapshot of kind catalog, which no instance may start from).
	if _, err := r.Store.Snapshot(ctx, catDir, store.Meta{Kind: store.KindCatalog, WorldHash: r.CatalogID, Persona: catalog.Persona}); err != nil {
		return nil, fmt.Errorf("synth: case study: snapshot the catalog: %w", err)
	}
	deltas, err := Deltas(p, plan, Skills(), r.CatalogID)
	if err != nil {
		return nil, err
	}
	days, err := Grow(ctx, deltas, GrowOptions{Store: r.Store, Generators: generator.Default(), WorkDir: filepath.Join(r.Dir, "work", p.ID), Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("synth: case study: %w", err)
	}
	if err := writeJSON(filepath.Join(r.Dir, "personas", p.ID, "bible.json"), p); err != nil {
		return nil, err
	}
	for i, d := range days {
		key, err := Key(struct {
			CaseStudy *Day
			Catalog   world.ID
		}{&plan[i], r.CatalogID})
		if err != nil {
			return nil, err
		}
		ddir := r.DayDir(p.ID, d.Day)
		if err := writeDay(ddir, &plan[i], deltas[i], nil); err != nil {
			return nil, err
		}
		if err := writeJSON(filepath.Join(ddir, "done.json"), Done{Key: key, Snapshot: d.Snapshot, Hash: d.Hash, Attempts: 1}); err != nil {
			return nil, err
		}
	}
	return days, nil
}

// caseStudyPicks chooses the case study persona's web history from the
// built catalog: a recipe, a hotel room free for the two install nights
// (with their price), and the venue on the map.
func caseStudyPicks(ctx context.Context, catDir string) (WebPicks, error) {
	w := WebPicks{CheckIn: "2026-03-09", Nights: 2}
	db, err := state.OpenDB(world.DBPath(catDir, catalog.DBName), true)
	if err != nil {
		return w, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT slug FROM recipes WHERE cuisine = 'Italian' ORDER BY rating_x10 DESC, id LIMIT 1`).Scan(&w.RecipeSlug); err != nil {
		return w, fmt.Errorf("a recipe for the web history: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT h.slug, r.id, sum(rr.price_cents) FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id
		JOIN room_rates rr ON rr.room_id = r.id AND rr.night >= ? AND rr.night < date(?, '+' || ? || ' days')
		GROUP BY r.id HAVING count(*) = ? AND min(rr.available) > 0 ORDER BY h.rating_x10 DESC, r.id LIMIT 1`, w.CheckIn, w.CheckIn, w.Nights, w.Nights).
		Scan(&w.HotelSlug, &w.RoomID, &w.TotalCents); err != nil {
		return w, fmt.Errorf("a hotel room for the web history: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT id FROM places WHERE kind = 'cinema' ORDER BY id LIMIT 1`).Scan(&w.PlaceID); err != nil {
		return w, fmt.Errorf("a place for the web history: %w", err)
	}
	return w, nil
}
