// Package code is the code-hosting site (GUI, a kit spec): repositories
// with issues and pull requests; the persona stars repositories, opens
// issues and creates repositories of its own.
//
// It imports internal/site/kit.
package code

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/code.sqlite).
const Name = "code"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Forgeyard", Tagline: "Where five hundred projects keep their code, issues and pull requests.",
		Schema: []string{
			`CREATE TABLE stars (id INTEGER PRIMARY KEY, username TEXT NOT NULL, repo_id INTEGER NOT NULL, starred_at TEXT NOT NULL, UNIQUE (username, repo_id))`,
			`CREATE TABLE issues (id INTEGER PRIMARY KEY, username TEXT NOT NULL, repo_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, opened_at TEXT NOT NULL)`,
			kit.NaturalKeyIndex("issues", "username", "repo_id", "title", "body", "opened_at"),
			`CREATE TABLE repositories (id INTEGER PRIMARY KEY, username TEXT NOT NULL, name TEXT NOT NULL, description TEXT, language TEXT NOT NULL, visibility TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (username, name))`,
		},
		Lists: []kit.List{{
			Name: "repositories", Title: "Repositories", Path: "/repos",
			Select:  `SELECT id AS key, owner || '/' || name AS title, language, stars, forks, description FROM repositories`,
			Search:  []string{"title", "description"},
			Filters: []kit.Filter{{Name: "language", Label: "Language", Column: "language", OptionsSQL: `SELECT DISTINCT language FROM repositories ORDER BY 1`}},
			Order:   "stars DESC, key",
			Columns: []kit.Column{{Key: "title", Label: "Repository"}, {Key: "language", Label: "Language"}, {Key: "stars", Label: "Stars"}, {Key: "forks", Label: "Forks"}, {Key: "description", Label: "About"}},
			Detail: kit.Detail{
				SQL:    `SELECT owner || '/' || name AS title, description, language, stars, forks, created_on FROM repositories WHERE id = CAST(:key AS INTEGER)`,
				Fields: []kit.Column{{Key: "description", Label: "About"}, {Key: "language", Label: "Language"}, {Key: "stars", Label: "Stars"}, {Key: "forks", Label: "Forks"}, {Key: "created_on", Label: "Created"}},
				Sections: []kit.Section{{Title: "Issues and pull requests",
					SQL:     `SELECT '#' || number AS number, CASE WHEN is_pr THEN 'pull request' ELSE 'issue' END AS kind, title, state, author, opened_on FROM repo_issues WHERE repo_id = CAST(:key AS INTEGER) ORDER BY number DESC`,
					Columns: []kit.Column{{Key: "number", Label: "Number"}, {Key: "kind", Label: "Kind"}, {Key: "title", Label: "Title"}, {Key: "state", Label: "State"}, {Key: "author", Label: "Author"}, {Key: "opened_on", Label: "Opened"}}}},
			},
		}},
		Actions: []kit.Action{
			{Name: "star", Label: "Star", On: "repositories",
				Check: `SELECT 'you starred this repository already' FROM stars WHERE username = :user AND repo_id = CAST(:key AS INTEGER)`,
				Exec:  []string{`INSERT INTO stars (username, repo_id, starred_at) VALUES (:user, CAST(:key AS INTEGER), :now)`},
				Done:  "Starred.", Then: "/stars"},
			{Name: "open-issue", Label: "Open issue", On: "repositories", Inputs: []kit.Input{{Name: "title", Label: "Title", Kind: "text", MaxLen: 200}, {Name: "body", Label: "Description", Kind: "text", MaxLen: 5000}},
				Exec: []string{`INSERT INTO issues (username, repo_id, title, body, state, opened_at) VALUES (:user, CAST(:key AS INTEGER), :title, :body, 'open', :now)`},
				Done: "Issue opened.", Then: "/my-issues"},
			{Name: "new-repo", Label: "Create repository", Inputs: []kit.Input{
				{Name: "name", Label: "Name (letters, digits, - and _)", Kind: "text", MaxLen: 100},
				{Name: "description", Label: "Description", Kind: "text", MaxLen: 300, Optional: true},
				{Name: "language", Label: "Language", Kind: "select", OptionsSQL: `SELECT DISTINCT language FROM repositories ORDER BY 1`},
				{Name: "visibility", Label: "Visibility", Kind: "select", Options: []string{"public", "private"}, Default: "private"}},
				Check: `SELECT CASE WHEN :name GLOB '*[^A-Za-z0-9_-]*' THEN 'a repository name has only letters, digits, - and _'
				                WHEN EXISTS (SELECT 1 FROM repositories WHERE username = :user AND name = :name) THEN 'you have a repository ' || :name || ' already' END`,
				Exec: []string{`INSERT INTO repositories (username, name, description, language, visibility, created_at) VALUES (:user, :name, :description, :language, :visibility, :now)`},
				Done: "Repository created.", Then: "/my-repos"},
			{Name: "unstar", Label: "Unstar", On: "stars", Exec: []string{`DELETE FROM stars WHERE username = :user AND repo_id = CAST(:key AS INTEGER)`}, Done: "Unstarred.", Then: "/stars"},
			{Name: "close-issue", Label: "Close", On: "my-issues",
				Check: `SELECT 'no open issue ' || :key WHERE NOT EXISTS (SELECT 1 FROM issues WHERE username = :user AND id = CAST(:key AS INTEGER) AND state = 'open')`,
				Exec:  []string{`UPDATE issues SET state = 'closed' WHERE username = :user AND id = CAST(:key AS INTEGER)`}, Done: "Issue closed.", Then: "/my-issues"},
		},
		Histories: []kit.History{
			{Name: "stars", Title: "Stars", Path: "/stars", Link: "/repos/",
				SQL:     `SELECT s.repo_id AS key, s.repo_id AS link, r.owner || '/' || r.name AS repo, r.language, s.starred_at FROM stars s JOIN cat.repositories r ON r.id = s.repo_id WHERE s.username = :user ORDER BY s.id DESC`,
				Columns: []kit.Column{{Key: "repo", Label: "Repository"}, {Key: "language", Label: "Language"}, {Key: "starred_at", Label: "Starred"}}},
			{Name: "my-issues", Title: "My issues", Path: "/my-issues", Link: "/repos/",
				SQL:     `SELECT i.id AS key, i.repo_id AS link, r.owner || '/' || r.name AS repo, i.title, i.state, i.opened_at FROM issues i JOIN cat.repositories r ON r.id = i.repo_id WHERE i.username = :user ORDER BY i.id DESC`,
				Columns: []kit.Column{{Key: "repo", Label: "Repository"}, {Key: "title", Label: "Issue"}, {Key: "state", Label: "State"}, {Key: "opened_at", Label: "Opened"}}},
			{Name: "my-repos", Title: "My repositories", Path: "/my-repos",
				SQL:     `SELECT id AS key, name, description, language, visibility, created_at FROM repositories WHERE username = :user ORDER BY id`,
				Columns: []kit.Column{{Key: "name", Label: "Name"}, {Key: "description", Label: "About"}, {Key: "language", Label: "Language"}, {Key: "visibility", Label: "Visibility"}, {Key: "created_at", Label: "Created"}}},
		},
	}
}
