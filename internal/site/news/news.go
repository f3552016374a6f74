// Package news is the news site (GUI, a kit spec): articles by section;
// the persona bookmarks articles and follows sections.
//
// It imports internal/site/kit.
package news

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/news.sqlite).
const Name = "news"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "The Daily Ledger", Tagline: "News from forty-four cities, every day.",
		Schema: []string{
			`CREATE TABLE bookmarks (id INTEGER PRIMARY KEY, username TEXT NOT NULL, article TEXT NOT NULL, saved_at TEXT NOT NULL, UNIQUE (username, article))`,
			`CREATE TABLE followed_sections (id INTEGER PRIMARY KEY, username TEXT NOT NULL, section TEXT NOT NULL, since TEXT NOT NULL, UNIQUE (username, section))`,
		},
		Lists: []kit.List{{
			Name: "articles", Title: "Articles", Path: "/articles",
			Select:  `SELECT slug AS key, title, section, byline, published_at FROM articles`,
			Search:  []string{"title", "byline"},
			Filters: []kit.Filter{{Name: "section", Label: "Section", Column: "section", OptionsSQL: `SELECT DISTINCT section FROM articles ORDER BY 1`}},
			Order:   "published_at DESC, key",
			Columns: []kit.Column{{Key: "title", Label: "Headline"}, {Key: "section", Label: "Section"}, {Key: "byline", Label: "By"}, {Key: "published_at", Label: "Published"}},
			Detail: kit.Detail{
				SQL:    `SELECT title, section, byline, published_at, summary, body FROM articles WHERE slug = :key`,
				Fields: []kit.Column{{Key: "section", Label: "Section"}, {Key: "byline", Label: "By"}, {Key: "published_at", Label: "Published"}, {Key: "summary", Label: "In short", Kind: "long"}, {Key: "body", Label: "Story", Kind: "long"}},
			},
		}},
		Actions: []kit.Action{
			{Name: "bookmark", Label: "Bookmark", On: "articles",
				Check: `SELECT 'you bookmarked this article already' FROM bookmarks WHERE username = :user AND article = :key`,
				Exec:  []string{`INSERT INTO bookmarks (username, article, saved_at) VALUES (:user, :key, :now)`},
				Done:  "Bookmarked.", Then: "/bookmarks"},
			{Name: "follow", Label: "Follow section", Inputs: []kit.Input{{Name: "section", Label: "Section", Kind: "select", OptionsSQL: `SELECT DISTINCT section FROM articles ORDER BY 1`}},
				Check: `SELECT 'you follow ' || :section || ' already' FROM followed_sections WHERE username = :user AND section = :section`,
				Exec:  []string{`INSERT INTO followed_sections (username, section, since) VALUES (:user, :section, :now)`},
				Done:  "Section followed.", Then: "/following"},
			{Name: "unbookmark", Label: "Remove", On: "bookmarks", Exec: []string{`DELETE FROM bookmarks WHERE username = :user AND article = :key`}, Done: "Bookmark removed.", Then: "/bookmarks"},
		},
		Histories: []kit.History{
			{Name: "bookmarks", Title: "Bookmarks", Path: "/bookmarks", Link: "/articles/",
				SQL:     `SELECT b.article AS key, b.article AS link, a.title, a.section, b.saved_at FROM bookmarks b JOIN cat.articles a ON a.slug = b.article WHERE b.username = :user ORDER BY b.id DESC`,
				Columns: []kit.Column{{Key: "title", Label: "Article"}, {Key: "section", Label: "Section"}, {Key: "saved_at", Label: "Saved"}}},
			{Name: "following", Title: "Followed sections", Path: "/following",
				SQL:     `SELECT section AS key, section, since FROM followed_sections WHERE username = :user ORDER BY id`,
				Columns: []kit.Column{{Key: "section", Label: "Section"}, {Key: "since", Label: "Since"}}},
		},
	}
}
