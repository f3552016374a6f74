package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// Generators turns a named generator and its params into file content;
// internal/generator's Registry implements it.
type Generators interface {
	Generate(name string, params json.RawMessage) ([]byte, error)
}

// Schema is the DDL of the catalog database.
func Schema() []string {
	return []string{
		`CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, site TEXT NOT NULL, title TEXT NOT NULL, brand TEXT NOT NULL, category TEXT NOT NULL, price_cents INTEGER NOT NULL, description TEXT NOT NULL, specs TEXT NOT NULL, image TEXT NOT NULL)`,
		`CREATE INDEX products_site_category ON products(site, category)`,
	}
}

// Photo size of every product image.
const (
	ImageWidth  = 640
	ImageHeight = 480
)

// Write writes the catalog into dir, which must not exist or be empty. The
// result is deterministic: the same content hash and image bytes every run.
func Write(ctx context.Context, dir string, gens Generators) error {
	if err := checkEmpty(dir); err != nil {
		return err
	}
	imgDir := filepath.Join(dir, world.HomeDir, ImagesDir)
	for _, d := range []string{filepath.Join(dir, world.DBDir), imgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("write catalog: %w", err)
		}
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: Persona, Day: 0, Clock: Clock}
	if err := world.WriteManifest(dir, m); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	if err := world.WriteAccounts(dir, nil); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	its := items()
	ps := Products()
	if err := writeDB(ctx, world.DBPath(dir, DBName), ps); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	for i, it := range its {
		if err := ctx.Err(); err != nil {
			return err
		}
		img, err := gens.Generate("product_image", imageParams(it))
		if err != nil {
			return fmt.Errorf("write catalog: image of %s: %w", it.p.SKU, err)
		}
		if err := os.WriteFile(filepath.Join(imgDir, ps[i].ImageFile()), img, 0o644); err != nil {
			return fmt.Errorf("write catalog: %w", err)
		}
	}
	return nil
}

func checkEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("write catalog: %s is not empty", dir)
	}
	return nil
}

func imageParams(it item) json.RawMessage {
	kind := "generic"
	if it.p.Category == CategorySurge {
		kind = "surge_protector"
	}
	p := map[string]any{
		"kind": kind, "body_color": it.look.body, "display_panel": it.look.display,
		"width": ImageWidth, "height": ImageHeight,
	}
	if it.look.outlets > 0 {
		p["outlets"] = min(it.look.outlets, 12)
	}
	b, err := json.Marshal(p) // map keys are sorted: stable bytes
	if err != nil {
		panic(err) // plain values: cannot fail
	}
	return b
}

func writeDB(ctx context.Context, path string, ps []Product) (err error) {
	db, err := state.OpenDB(path, false)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range Schema() {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for _, p := range ps {
		specs, err := p.Specs.MarshalJSON()
		if err != nil {
			return fmt.Errorf("product %s: %w", p.SKU, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO products (id, sku, site, title, brand, category, price_cents, description, specs, image) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.ID, p.SKU, p.Site, p.Title, p.Brand, p.Category, p.PriceCents, p.Description, string(specs), p.Image); err != nil {
			return fmt.Errorf("product %s: %w", p.SKU, err)
		}
	}
	return tx.Commit()
}

// Load reads every product of the catalog at dir, in id order.
func Load(ctx context.Context, dir string) ([]Product, error) {
	c, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.All(ctx)
}

// ErrNotFound is returned by Catalog.Product for an unknown SKU.
var ErrNotFound = errors.New("no such product")

// Catalog is an open, read-only catalog. It is safe for concurrent use.
type Catalog struct {
	dir string
	db  *sql.DB
}

// Open opens the catalog at dir read-only.
func Open(dir string) (*Catalog, error) {
	path := world.DBPath(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	db, err := state.OpenDB(path, true)
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	return &Catalog{dir: dir, db: db}, nil
}

// FromDB is a Catalog over an open catalog database (one a site opened
// read-only); Close closes db.
func FromDB(db *sql.DB) *Catalog { return &Catalog{db: db} }

// Close closes the database.
func (c *Catalog) Close() error { return c.db.Close() }

// ImagesDir returns the directory holding the product photos.
func (c *Catalog) ImagesDir() string { return filepath.Join(c.dir, world.HomeDir, ImagesDir) }

const selectProducts = `SELECT id, sku, site, title, brand, category, price_cents, description, specs, image FROM products`

// All returns every product in id order.
func (c *Catalog) All(ctx context.Context) ([]Product, error) {
	return c.query(ctx, selectProducts+` ORDER BY id`)
}

// Product returns the product of site with the given SKU, or ErrNotFound.
func (c *Catalog) Product(ctx context.Context, site, sku string) (Product, error) {
	ps, err := c.query(ctx, selectProducts+` WHERE site = ? AND sku = ?`, site, sku)
	if err != nil {
		return Product{}, err
	}
	if len(ps) == 0 {
		return Product{}, fmt.Errorf("product %q: %w", sku, ErrNotFound)
	}
	return ps[0], nil
}

// MaxSearchTerms bounds the words of a search query that count.
const MaxSearchTerms = 8

// Search returns up to limit products of site whose title, description, SKU
// or category contains every word of q (case-insensitive), ordered by
// category, title and SKU. An empty q matches every product.
func (c *Catalog) Search(ctx context.Context, site, q string, limit int) ([]Product, error) {
	ps, _, err := c.SearchPage(ctx, site, q, limit, 0)
	return ps, err
}

// SearchPage is Search from the offset-th match, with the number of all
// matches.
func (c *Catalog) SearchPage(ctx context.Context, site, q string, limit, offset int) ([]Product, int, error) {
	where := ` WHERE site = ?`
	args := []any{site}
	for i, w := range fields(q) {
		if i == MaxSearchTerms {
			break
		}
		pat := "%" + likeEscape(w) + "%"
		where += ` AND (title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\' OR sku LIKE ? ESCAPE '\' OR category LIKE ? ESCAPE '\')`
		args = append(args, pat, pat, pat, pat)
	}
	var total int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM products`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	ps, err := c.query(ctx, selectProducts+where+` ORDER BY category, title, sku LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return ps, total, err
}

func (c *Catalog) query(ctx context.Context, q string, args ...any) ([]Product, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer rows.Close()
	var ps []Product
	for rows.Next() {
		var p Product
		var specs string
		if err := rows.Scan(&p.ID, &p.SKU, &p.Site, &p.Title, &p.Brand, &p.Category, &p.PriceCents, &p.Description, &specs, &p.Image); err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		if err := p.Specs.UnmarshalJSON([]byte(specs)); err != nil {
			return nil, fmt.Errorf("catalog: product %s: %w", p.SKU, err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return ps, nil
}
