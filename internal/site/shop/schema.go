package shop

// DBName is the world database of the shop: db/shop.sqlite.
const DBName = "shop"

// SiteName is the site of the shop's accounts in accounts.json.
const SiteName = "shop"

// Schema is the DDL of db/shop.sqlite, in order.
func Schema() []string {
	return []string{
		`CREATE TABLE cart_items (id INTEGER PRIMARY KEY, username TEXT NOT NULL, sku TEXT NOT NULL, qty INTEGER NOT NULL, added_at TEXT NOT NULL, UNIQUE(username, sku))`,
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, order_no TEXT NOT NULL UNIQUE, username TEXT NOT NULL, placed_at TEXT NOT NULL, total_cents INTEGER NOT NULL)`,
		`CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_no TEXT NOT NULL, sku TEXT NOT NULL, qty INTEGER NOT NULL, price_cents INTEGER NOT NULL, UNIQUE(order_no, sku))`,
	}
}

// TimeFormat is how the shop stamps rows (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// MaxQty is the most of one product a cart line may hold.
const MaxQty = 99
