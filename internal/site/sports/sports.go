// Package sports is the sports site (GUI, a kit spec): three leagues of
// teams with fixtures and results; the persona follows teams.
//
// It imports internal/site/kit.
package sports

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/sports.sqlite).
const Name = "sports"

// Spec is the site.
func Spec() *kit.Spec {
	leagues := `SELECT DISTINCT league FROM teams ORDER BY 1`
	return &kit.Spec{
		Name: Name, Title: "Scoreline", Tagline: "Fixtures, results and tables of three leagues.",
		Schema: []string{`CREATE TABLE followed_teams (id INTEGER PRIMARY KEY, username TEXT NOT NULL, team TEXT NOT NULL, since TEXT NOT NULL, UNIQUE (username, team))`},
		Lists: []kit.List{
			{Name: "teams", Title: "Teams", Path: "/teams",
				Select:  `SELECT t.slug AS key, t.name AS title, t.sport, t.league, c.name AS city FROM teams t JOIN cities c ON c.id = t.city_id`,
				Search:  []string{"title", "city"},
				Filters: []kit.Filter{{Name: "league", Label: "League", Column: "league", OptionsSQL: leagues}},
				Order:   "league, title",
				Columns: []kit.Column{{Key: "title", Label: "Team"}, {Key: "league", Label: "League"}, {Key: "sport", Label: "Sport"}, {Key: "city", Label: "City"}},
				Detail: kit.Detail{
					SQL: `SELECT t.name AS title, t.sport, t.league, c.name AS city,
					             (SELECT count(*) FROM fixtures f WHERE f.home_score IS NOT NULL AND ((f.home_id = t.id AND f.home_score > f.away_score) OR (f.away_id = t.id AND f.away_score > f.home_score))) AS won,
					             (SELECT count(*) FROM fixtures f WHERE f.home_score IS NOT NULL AND f.home_score = f.away_score AND t.id IN (f.home_id, f.away_id)) AS drawn,
					             (SELECT count(*) FROM fixtures f WHERE f.home_score IS NOT NULL AND ((f.home_id = t.id AND f.home_score < f.away_score) OR (f.away_id = t.id AND f.away_score < f.home_score))) AS lost
					      FROM teams t JOIN cities c ON c.id = t.city_id WHERE t.slug = :key`,
					Fields: []kit.Column{{Key: "league", Label: "League"}, {Key: "sport", Label: "Sport"}, {Key: "city", Label: "City"}, {Key: "won", Label: "Won"}, {Key: "drawn", Label: "Drawn"}, {Key: "lost", Label: "Lost"}},
					Sections: []kit.Section{{Title: "Fixtures and results", Link: "/teams/",
						SQL: `SELECT o.slug AS key, o.name AS opponent, CASE WHEN f.home_id = t.id THEN 'home' ELSE 'away' END AS venue, f.starts_at,
						             CASE WHEN f.home_score IS NULL THEN '' ELSE f.home_score || ' - ' || f.away_score END AS score
						      FROM teams t JOIN fixtures f ON t.id IN (f.home_id, f.away_id) JOIN teams o ON o.id = CASE WHEN f.home_id = t.id THEN f.away_id ELSE f.home_id END
						      WHERE t.slug = :key ORDER BY f.starts_at`,
						Columns: []kit.Column{{Key: "opponent", Label: "Against"}, {Key: "venue", Label: "Venue"}, {Key: "starts_at", Label: "Kick-off"}, {Key: "score", Label: "Score (home - away)"}}}},
				}},
			{Name: "fixtures", Title: "Fixtures", Path: "/fixtures",
				Select: `SELECT f.id AS key, h.name || ' v ' || a.name AS title, f.league, f.starts_at, CASE WHEN f.home_score IS NULL THEN '' ELSE f.home_score || ' - ' || f.away_score END AS score
				         FROM fixtures f JOIN teams h ON h.id = f.home_id JOIN teams a ON a.id = f.away_id`,
				Search:  []string{"title"},
				Filters: []kit.Filter{{Name: "league", Label: "League", Column: "league", OptionsSQL: leagues}},
				Order:   "starts_at, key",
				Columns: []kit.Column{{Key: "title", Label: "Match"}, {Key: "league", Label: "League"}, {Key: "starts_at", Label: "Kick-off"}, {Key: "score", Label: "Score"}},
				Detail: kit.Detail{
					SQL: `SELECT h.name || ' v ' || a.name AS title, f.league, f.starts_at, CASE WHEN f.home_score IS NULL THEN 'not played yet' ELSE f.home_score || ' - ' || f.away_score END AS score
					      FROM fixtures f JOIN teams h ON h.id = f.home_id JOIN teams a ON a.id = f.away_id WHERE f.id = CAST(:key AS INTEGER)`,
					Fields: []kit.Column{{Key: "league", Label: "League"}, {Key: "starts_at", Label: "Kick-off"}, {Key: "score", Label: "Score"}},
				}},
		},
		Actions: []kit.Action{
			{Name: "follow", Label: "Follow team", On: "teams",
				Check: `SELECT 'you follow this team already' FROM followed_teams WHERE username = :user AND team = :key`,
				Exec:  []string{`INSERT INTO followed_teams (username, team, since) VALUES (:user, :key, :now)`},
				Done:  "Team followed.", Then: "/following"},
			{Name: "unfollow", Label: "Unfollow", On: "following", Exec: []string{`DELETE FROM followed_teams WHERE username = :user AND team = :key`}, Done: "Team unfollowed.", Then: "/following"},
		},
		Histories: []kit.History{{Name: "following", Title: "Followed teams", Path: "/following", Link: "/teams/",
			SQL: `SELECT ft.team AS key, ft.team AS link, t.name, t.league, ft.since,
			             (SELECT min(f.starts_at) FROM cat.fixtures f WHERE t.id IN (f.home_id, f.away_id) AND f.home_score IS NULL) AS next_match
			      FROM followed_teams ft JOIN cat.teams t ON t.slug = ft.team WHERE ft.username = :user ORDER BY ft.id`,
			Columns: []kit.Column{{Key: "name", Label: "Team"}, {Key: "league", Label: "League"}, {Key: "next_match", Label: "Next match"}, {Key: "since", Label: "Following since"}}}},
	}
}
