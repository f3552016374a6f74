package shop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"

	"github.com/wildawm/wildawm/internal/site/web"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// cartLine is one row of cart_items.
type cartLine struct {
	SKU string
	Qty int64
}

type orderRow struct {
	OrderNo    string
	PlacedAt   string
	TotalCents int64
	Items      []orderItemRow
}

type orderItemRow struct {
	SKU        string
	Qty        int64
	PriceCents int64
}

// openWorld opens the world's shop database for this request only. It never
// creates it: a world without one is a 500 that says so.
func (s *Site) openWorld(readOnly bool) (*sql.DB, error) {
	path := world.DBPath(s.opts.WorldDir, DBName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, &web.Error{Status: http.StatusInternalServerError, Msg: "the shop has no database in this world", Err: err}
	} else if err != nil {
		return nil, web.Internal(err)
	}
	db, err := state.OpenDB(path, readOnly)
	if err != nil {
		return nil, web.Internal(err)
	}
	return db, nil
}

// read runs fn on a read-only connection to the world database.
func (s *Site) read(ctx context.Context, fn func(db *sql.DB) error) error {
	db, err := s.openWorld(true)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// write runs fn inside BEGIN IMMEDIATE ... COMMIT on the world database;
// an error from fn rolls back.
func (s *Site) write(ctx context.Context, fn func(c *sql.Conn, now string) error) (err error) {
	now, err := s.now()
	if err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	db, err := s.openWorld(false)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = web.Internal(cerr)
		}
	}()
	c, err := db.Conn(ctx)
	if err != nil {
		return web.Internal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return web.Internal(err)
	}
	if err := fn(c, now); err != nil {
		if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			return web.Internal(errors.Join(err, rerr))
		}
		return err
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return web.Internal(err)
	}
	return nil
}

// now is the world's time: Options.Clock, else the world manifest's clock.
func (s *Site) now() (string, error) {
	t, err := world.ClockOr(s.opts.Clock, s.opts.WorldDir)
	if err != nil {
		return "", web.Internal(err)
	}
	return t.UTC().Format(TimeFormat), nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func cartLines(ctx context.Context, q querier, user string) ([]cartLine, error) {
	rows, err := q.QueryContext(ctx, `SELECT sku, qty FROM cart_items WHERE username = ? ORDER BY id`, user)
	if err != nil {
		return nil, fmt.Errorf("read cart: %w", err)
	}
	defer rows.Close()
	var ls []cartLine
	for rows.Next() {
		var l cartLine
		if err := rows.Scan(&l.SKU, &l.Qty); err != nil {
			return nil, fmt.Errorf("read cart: %w", err)
		}
		ls = append(ls, l)
	}
	return ls, rows.Err()
}

func orders(ctx context.Context, q querier, user string) ([]orderRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT o.order_no, o.placed_at, o.total_cents, i.sku, i.qty, i.price_cents
		FROM orders o JOIN order_items i ON i.order_no = o.order_no
		WHERE o.username = ? ORDER BY o.id DESC, i.id`, user)
	if err != nil {
		return nil, fmt.Errorf("read orders: %w", err)
	}
	defer rows.Close()
	var os []orderRow
	for rows.Next() {
		var o orderRow
		var it orderItemRow
		if err := rows.Scan(&o.OrderNo, &o.PlacedAt, &o.TotalCents, &it.SKU, &it.Qty, &it.PriceCents); err != nil {
			return nil, fmt.Errorf("read orders: %w", err)
		}
		if n := len(os); n == 0 || os[n-1].OrderNo != o.OrderNo {
			os = append(os, o)
		}
		os[len(os)-1].Items = append(os[len(os)-1].Items, it)
	}
	return os, rows.Err()
}

func nextID(ctx context.Context, c *sql.Conn, table string) (int64, error) {
	var id int64
	err := c.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM `+state.QuoteIdent(table)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("next id of %s: %w", table, err)
	}
	return id, nil
}
