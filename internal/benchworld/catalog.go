package benchworld

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// CatalogPersona is the persona field of a catalog's manifest. A catalog is
// stored in the world layout (manifest, db/, home/ for images) so that it
// hashes, snapshots and checks out like a world; snapshots mark it with
// kind "catalog".
const CatalogPersona = "catalog"

// WriteCatalog writes a read-only catalog of about targetBytes of products
// into dir (created), deterministically from seed.
func WriteCatalog(ctx context.Context, dir string, seed uint64, targetBytes int64, gens delta.Generators) error {
	r := rand.New(rand.NewPCG(seed, 0x636174616c6f67))
	for _, sub := range []string{world.DBDir, filepath.Join(world.HomeDir, "images")} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: CatalogPersona, Day: 0, Clock: clock(0)}
	if err := world.WriteManifest(dir, m); err != nil {
		return err
	}
	if err := world.WriteAccounts(dir, nil); err != nil {
		return err
	}
	db, err := state.OpenDB(world.DBPath(dir, "catalog"), false)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, site TEXT NOT NULL, title TEXT NOT NULL, brand TEXT, category TEXT, price REAL, description TEXT, specs TEXT, image TEXT)`,
		`CREATE INDEX products_site ON products(site, category)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO products (id, sku, site, title, brand, category, price, description, specs, image) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	var written int64
	for id := 1; written < targetBytes; id++ {
		if id%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		desc := sentence(r, 60+r.IntN(60))
		specs := fmt.Sprintf(`{"rating_j":%d,"outlets":%d,"voltage":%d,"weight_g":%d}`, 500+r.IntN(3000), 2+r.IntN(10), 110+r.IntN(20), 200+r.IntN(3000))
		title := sentence(r, 3)
		if _, err := st.ExecContext(ctx, id, fmt.Sprintf("P%07d", id), pick(r, sites), title, pick(r, lastNames), pick(r, words), float64(r.IntN(100000))/100, desc, specs, fmt.Sprintf("images/p%07d.png", id%catalogImages)); err != nil {
			return err
		}
		written += int64(len(desc) + len(specs) + len(title) + 60)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for i := range catalogImages {
		img, err := gens.Generate("product_image", params(map[string]any{
			"kind": pick(r, []string{"surge_protector", "generic"}), "body_color": pick(r, []string{"#f4f4f4", "#1e1e1e", "#9a9a9a", "#2a4d8f", "#8f2a2a"}),
			"display_panel": r.IntN(2) == 0, "width": 320, "height": 240,
		}))
		if err != nil {
			return fmt.Errorf("catalog image %d: %w", i, err)
		}
		if err := os.WriteFile(filepath.Join(dir, world.HomeDir, "images", fmt.Sprintf("p%07d.png", i)), img, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// catalogImages is how many product images the catalog holds; products
// share them by id modulo this count.
const catalogImages = 200
