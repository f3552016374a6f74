// Package devices is the device maker's store (GUI, a kit spec): Lumen's
// phones, tablets, laptops and accessories; the persona orders, returns and
// keeps a wish list.
//
// It imports internal/site/kit.
package devices

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/devices.sqlite).
const Name = "devices"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Lumen Store", Tagline: "Phones, tablets, laptops and accessories, straight from Lumen.",
		Schema: []string{
			`CREATE TABLE orders (id INTEGER PRIMARY KEY, order_no TEXT NOT NULL UNIQUE, username TEXT NOT NULL, sku TEXT NOT NULL, qty INTEGER NOT NULL, price_cents INTEGER NOT NULL, status TEXT NOT NULL, placed_at TEXT NOT NULL, returned_at TEXT)`,
			`CREATE TABLE wishlist (id INTEGER PRIMARY KEY, username TEXT NOT NULL, sku TEXT NOT NULL, added_at TEXT NOT NULL, UNIQUE (username, sku))`,
		},
		Lists: []kit.List{{
			Name: "products", Title: "Products", Path: "/products",
			Select:  `SELECT sku AS key, title, category, price_cents FROM products WHERE site = 'devices'`,
			Search:  []string{"title", "category"},
			Filters: []kit.Filter{{Name: "category", Label: "Category", Column: "category", OptionsSQL: `SELECT DISTINCT category FROM products WHERE site = 'devices' ORDER BY 1`}, {Name: "max_cents", Label: "Price at most (cents)", Column: "price_cents", Op: "<=", Number: true}},
			Order:   "category, price_cents, key",
			Columns: []kit.Column{{Key: "title", Label: "Product"}, {Key: "category", Label: "Category"}, {Key: "price_cents", Label: "Price", Kind: "cents"}},
			Detail: kit.Detail{
				SQL:    `SELECT title, category, price_cents, description, specs, image FROM products WHERE site = 'devices' AND sku = :key`,
				Image:  "image",
				Fields: []kit.Column{{Key: "price_cents", Label: "Price", Kind: "cents"}, {Key: "category", Label: "Category"}, {Key: "specs", Label: "Specifications", Kind: "specs"}, {Key: "description", Label: "About", Kind: "long"}},
			},
		}},
		Actions: []kit.Action{
			{Name: "buy", Label: "Buy now", On: "products", Inputs: []kit.Input{{Name: "qty", Label: "Quantity", Kind: "int", Min: 1, Max: 5, Default: "1"}},
				Exec: []string{`INSERT INTO orders (order_no, username, sku, qty, price_cents, status, placed_at)
					SELECT 'LO-' || (100001 + coalesce((SELECT max(id) FROM orders), 0)), :user, :key, :qty, price_cents, 'placed', :now FROM cat.products WHERE site = 'devices' AND sku = :key`},
				Done: "Order placed.", Then: "/orders"},
			{Name: "wish", Label: "Add to wish list", On: "products",
				Check: `SELECT 'it is on your wish list already' FROM wishlist WHERE username = :user AND sku = :key`,
				Exec:  []string{`INSERT INTO wishlist (username, sku, added_at) VALUES (:user, :key, :now)`},
				Done:  "Added to your wish list.", Then: "/wishlist"},
			{Name: "return", Label: "Return", On: "orders",
				Check: `SELECT CASE WHEN status <> 'placed' THEN 'order ' || order_no || ' is ' || status || ' already' END FROM orders WHERE username = :user AND order_no = :key
				        UNION ALL SELECT 'no order ' || :key WHERE NOT EXISTS (SELECT 1 FROM orders WHERE username = :user AND order_no = :key)`,
				Exec: []string{`UPDATE orders SET status = 'returned', returned_at = :now WHERE username = :user AND order_no = :key`},
				Done: "Return started.", Then: "/orders"},
			{Name: "unwish", Label: "Remove", On: "wishlist", Exec: []string{`DELETE FROM wishlist WHERE username = :user AND sku = :key`}, Done: "Removed from your wish list.", Then: "/wishlist"},
		},
		Histories: []kit.History{
			{Name: "orders", Title: "Orders", Path: "/orders", Link: "/products/",
				SQL:     `SELECT o.order_no AS key, o.sku AS link, o.order_no, p.title, o.qty, o.qty * o.price_cents AS total, o.status, o.placed_at FROM orders o JOIN cat.products p ON p.site = 'devices' AND p.sku = o.sku WHERE o.username = :user ORDER BY o.id DESC`,
				Columns: []kit.Column{{Key: "order_no", Label: "Order"}, {Key: "title", Label: "Product"}, {Key: "qty", Label: "Qty"}, {Key: "total", Label: "Total", Kind: "cents"}, {Key: "status", Label: "Status"}, {Key: "placed_at", Label: "Placed"}}},
			{Name: "wishlist", Title: "Wish list", Path: "/wishlist", Link: "/products/",
				SQL:     `SELECT w.sku AS key, w.sku AS link, p.title, p.price_cents, w.added_at FROM wishlist w JOIN cat.products p ON p.site = 'devices' AND p.sku = w.sku WHERE w.username = :user ORDER BY w.id DESC`,
				Columns: []kit.Column{{Key: "title", Label: "Product"}, {Key: "price_cents", Label: "Price", Kind: "cents"}, {Key: "added_at", Label: "Added"}}},
		},
	}
}
