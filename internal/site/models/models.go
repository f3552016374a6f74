// Package models is the model hub (GUI, a kit spec): models and datasets
// with cards; the persona likes models and collects datasets.
//
// It imports internal/site/kit.
package models

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/models.sqlite).
const Name = "models"

// Spec is the site.
func Spec() *kit.Spec {
	tasks := `SELECT DISTINCT task FROM models ORDER BY 1`
	return &kit.Spec{
		Name: Name, Title: "Modelhaus", Tagline: "A thousand models and five hundred datasets, with their cards.",
		Schema: []string{
			`CREATE TABLE likes (id INTEGER PRIMARY KEY, username TEXT NOT NULL, model_id INTEGER NOT NULL, liked_at TEXT NOT NULL, UNIQUE (username, model_id))`,
			`CREATE TABLE collection (id INTEGER PRIMARY KEY, username TEXT NOT NULL, dataset_id INTEGER NOT NULL, note TEXT, added_at TEXT NOT NULL, UNIQUE (username, dataset_id))`,
		},
		Lists: []kit.List{
			{Name: "models", Title: "Models", Path: "/models",
				Select:  `SELECT id AS key, owner || '/' || name AS title, task, params_m, license, downloads, likes FROM models`,
				Search:  []string{"title", "task"},
				Filters: []kit.Filter{{Name: "task", Label: "Task", Column: "task", OptionsSQL: tasks}, {Name: "license", Label: "License", Column: "license", OptionsSQL: `SELECT DISTINCT license FROM models ORDER BY 1`}, {Name: "max_params_m", Label: "At most million parameters", Column: "params_m", Op: "<=", Number: true}},
				Order:   "downloads DESC, key",
				Columns: []kit.Column{{Key: "title", Label: "Model"}, {Key: "task", Label: "Task"}, {Key: "params_m", Label: "Parameters (M)"}, {Key: "license", Label: "License"}, {Key: "downloads", Label: "Downloads"}, {Key: "likes", Label: "Likes"}},
				Detail: kit.Detail{
					SQL:    `SELECT owner || '/' || name AS title, task, params_m, license, downloads, likes, updated_on, card FROM models WHERE id = CAST(:key AS INTEGER)`,
					Fields: []kit.Column{{Key: "task", Label: "Task"}, {Key: "params_m", Label: "Parameters (M)"}, {Key: "license", Label: "License"}, {Key: "downloads", Label: "Downloads"}, {Key: "likes", Label: "Likes"}, {Key: "updated_on", Label: "Updated"}, {Key: "card", Label: "Model card", Kind: "long"}},
				}},
			{Name: "datasets", Title: "Datasets", Path: "/datasets",
				Select:  `SELECT id AS key, owner || '/' || name AS title, task, rows, license, downloads FROM datasets`,
				Search:  []string{"title", "task"},
				Filters: []kit.Filter{{Name: "task", Label: "Task", Column: "task", OptionsSQL: `SELECT DISTINCT task FROM datasets ORDER BY 1`}},
				Order:   "downloads DESC, key",
				Columns: []kit.Column{{Key: "title", Label: "Dataset"}, {Key: "task", Label: "Task"}, {Key: "rows", Label: "Rows"}, {Key: "license", Label: "License"}, {Key: "downloads", Label: "Downloads"}},
				Detail: kit.Detail{
					SQL:    `SELECT owner || '/' || name AS title, task, rows, license, downloads, updated_on, card FROM datasets WHERE id = CAST(:key AS INTEGER)`,
					Fields: []kit.Column{{Key: "task", Label: "Task"}, {Key: "rows", Label: "Rows"}, {Key: "license", Label: "License"}, {Key: "downloads", Label: "Downloads"}, {Key: "updated_on", Label: "Updated"}, {Key: "card", Label: "Dataset card", Kind: "long"}},
				}},
		},
		Actions: []kit.Action{
			{Name: "like", Label: "Like", On: "models",
				Check: `SELECT 'you like this model already' FROM likes WHERE username = :user AND model_id = CAST(:key AS INTEGER)`,
				Exec:  []string{`INSERT INTO likes (username, model_id, liked_at) VALUES (:user, CAST(:key AS INTEGER), :now)`},
				Done:  "Liked.", Then: "/likes"},
			{Name: "collect", Label: "Add to collection", On: "datasets", Inputs: []kit.Input{{Name: "note", Label: "Note", Kind: "text", MaxLen: 300, Optional: true}},
				Check: `SELECT 'the dataset is in your collection already' FROM collection WHERE username = :user AND dataset_id = CAST(:key AS INTEGER)`,
				Exec:  []string{`INSERT INTO collection (username, dataset_id, note, added_at) VALUES (:user, CAST(:key AS INTEGER), :note, :now)`},
				Done:  "Added to your collection.", Then: "/collection"},
			{Name: "unlike", Label: "Unlike", On: "likes", Exec: []string{`DELETE FROM likes WHERE username = :user AND model_id = CAST(:key AS INTEGER)`}, Done: "Unliked.", Then: "/likes"},
		},
		Histories: []kit.History{
			{Name: "likes", Title: "Liked models", Path: "/likes", Link: "/models/",
				SQL:     `SELECT l.model_id AS key, l.model_id AS link, m.owner || '/' || m.name AS model, m.task, l.liked_at FROM likes l JOIN cat.models m ON m.id = l.model_id WHERE l.username = :user ORDER BY l.id DESC`,
				Columns: []kit.Column{{Key: "model", Label: "Model"}, {Key: "task", Label: "Task"}, {Key: "liked_at", Label: "Liked"}}},
			{Name: "collection", Title: "Dataset collection", Path: "/collection", Link: "/datasets/",
				SQL:     `SELECT c.dataset_id AS key, c.dataset_id AS link, d.owner || '/' || d.name AS dataset, d.task, c.note, c.added_at FROM collection c JOIN cat.datasets d ON d.id = c.dataset_id WHERE c.username = :user ORDER BY c.id DESC`,
				Columns: []kit.Column{{Key: "dataset", Label: "Dataset"}, {Key: "task", Label: "Task"}, {Key: "note", Label: "Note"}, {Key: "added_at", Label: "Added"}}},
		},
	}
}
