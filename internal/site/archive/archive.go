// Package archive is the preprint archive (GUI, a kit spec): papers with
// authors, categories and abstracts; the persona keeps a reading library
// with a shelf per paper.
//
// It imports internal/site/kit.
package archive

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/archive.sqlite).
const Name = "archive"

// Spec is the site.
func Spec() *kit.Spec {
	shelves := []string{"to read", "reading", "read", "cite"}
	return &kit.Spec{
		Name: Name, Title: "Preprint Commons", Tagline: "Open preprints in computing, statistics and the sciences.",
		Schema: []string{
			`CREATE TABLE library (id INTEGER PRIMARY KEY, username TEXT NOT NULL, paper TEXT NOT NULL, shelf TEXT NOT NULL, added_at TEXT NOT NULL, UNIQUE (username, paper))`,
		},
		Lists: []kit.List{{
			Name: "papers", Title: "Papers", Path: "/papers",
			Select:  `SELECT ext_id AS key, ext_id, title, category, submitted_on FROM papers`,
			Search:  []string{"title", "ext_id"},
			Filters: []kit.Filter{{Name: "category", Label: "Category", Column: "category", OptionsSQL: `SELECT DISTINCT category FROM papers ORDER BY 1`}},
			Order:   "submitted_on DESC, key",
			Columns: []kit.Column{{Key: "title", Label: "Title"}, {Key: "ext_id", Label: "Id"}, {Key: "category", Label: "Category"}, {Key: "submitted_on", Label: "Submitted"}},
			Detail: kit.Detail{
				SQL:    `SELECT title, ext_id, authors, category, submitted_on, abstract FROM papers WHERE ext_id = :key`,
				Fields: []kit.Column{{Key: "ext_id", Label: "Id"}, {Key: "authors", Label: "Authors", Kind: "list"}, {Key: "category", Label: "Category"}, {Key: "submitted_on", Label: "Submitted"}, {Key: "abstract", Label: "Abstract", Kind: "long"}},
			},
		}},
		Actions: []kit.Action{
			{Name: "shelve", Label: "Add to library", On: "papers", Inputs: []kit.Input{{Name: "shelf", Label: "Shelf", Kind: "select", Options: shelves, Default: "to read"}},
				Exec: []string{`INSERT INTO library (username, paper, shelf, added_at) VALUES (:user, :key, :shelf, :now) ON CONFLICT (username, paper) DO UPDATE SET shelf = excluded.shelf`},
				Done: "Saved to your library.", Then: "/library"},
			{Name: "unshelve", Label: "Remove", On: "library", Exec: []string{`DELETE FROM library WHERE username = :user AND paper = :key`}, Done: "Removed from your library.", Then: "/library"},
		},
		Histories: []kit.History{{Name: "library", Title: "Library", Path: "/library", Link: "/papers/",
			SQL:     `SELECT l.paper AS key, l.paper AS link, p.title, l.shelf, l.added_at FROM library l JOIN cat.papers p ON p.ext_id = l.paper WHERE l.username = :user ORDER BY l.id DESC`,
			Columns: []kit.Column{{Key: "title", Label: "Paper"}, {Key: "shelf", Label: "Shelf"}, {Key: "added_at", Label: "Added"}}}},
	}
}
