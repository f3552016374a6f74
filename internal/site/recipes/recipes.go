// Package recipes is the recipe site (GUI, a kit spec): recipes with
// ingredients, steps, ratings and photos; the persona saves recipes with a
// note and writes reviews.
//
// It imports internal/site/kit.
package recipes

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/recipes.sqlite).
const Name = "recipes"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Larder", Tagline: "Two thousand recipes from twelve kitchens, rated by the people who cooked them.",
		Schema: []string{
			`CREATE TABLE saved_recipes (id INTEGER PRIMARY KEY, username TEXT NOT NULL, slug TEXT NOT NULL, note TEXT, saved_at TEXT NOT NULL, UNIQUE (username, slug))`,
			`CREATE TABLE reviews (id INTEGER PRIMARY KEY, username TEXT NOT NULL, slug TEXT NOT NULL, rating INTEGER NOT NULL, body TEXT NOT NULL, posted_at TEXT NOT NULL)`,
			kit.NaturalKeyIndex("reviews", "username", "slug", "rating", "body", "posted_at"),
		},
		Lists: []kit.List{{
			Name: "recipes", Title: "Recipes", Path: "/recipes",
			Select:  `SELECT slug AS key, title, cuisine, course, minutes, servings, rating_x10, ratings FROM recipes`,
			Search:  []string{"title", "cuisine"},
			Filters: []kit.Filter{{Name: "cuisine", Label: "Cuisine", Column: "cuisine", OptionsSQL: `SELECT DISTINCT cuisine FROM recipes ORDER BY 1`}, {Name: "course", Label: "Course", Column: "course", OptionsSQL: `SELECT DISTINCT course FROM recipes ORDER BY 1`}, {Name: "max_minutes", Label: "At most minutes", Column: "minutes", Op: "<=", Number: true}},
			Order:   "rating_x10 DESC, ratings DESC, key",
			Columns: []kit.Column{{Key: "title", Label: "Recipe"}, {Key: "cuisine", Label: "Cuisine"}, {Key: "course", Label: "Course"}, {Key: "minutes", Label: "Minutes"}, {Key: "rating_x10", Label: "Rating", Kind: "rating10"}},
			Detail: kit.Detail{
				SQL:    `SELECT title, cuisine, course, minutes, servings, rating_x10, ratings, image, summary FROM recipes WHERE slug = :key`,
				Image:  "image",
				Fields: []kit.Column{{Key: "cuisine", Label: "Cuisine"}, {Key: "course", Label: "Course"}, {Key: "minutes", Label: "Minutes"}, {Key: "servings", Label: "Servings"}, {Key: "rating_x10", Label: "Rating", Kind: "rating10"}, {Key: "ratings", Label: "Ratings"}, {Key: "summary", Label: "About", Kind: "long"}},
				Sections: []kit.Section{
					{Title: "Ingredients", SQL: `SELECT quantity || ' ' || unit AS amount, ingredient FROM recipe_ingredients i JOIN recipes r ON r.id = i.recipe_id WHERE r.slug = :key ORDER BY pos`, Columns: []kit.Column{{Key: "amount", Label: "Amount"}, {Key: "ingredient", Label: "Ingredient"}}},
					{Title: "Steps", SQL: `SELECT pos, text FROM recipe_steps s JOIN recipes r ON r.id = s.recipe_id WHERE r.slug = :key ORDER BY pos`, Columns: []kit.Column{{Key: "pos", Label: "Step"}, {Key: "text", Label: "What to do"}}},
				},
			},
		}},
		Actions: []kit.Action{
			{Name: "save", Label: "Save recipe", On: "recipes", Inputs: []kit.Input{{Name: "note", Label: "Note", Kind: "text", MaxLen: 500, Optional: true}},
				Check: `SELECT 'you saved this recipe already' FROM saved_recipes WHERE username = :user AND slug = :key`,
				Exec:  []string{`INSERT INTO saved_recipes (username, slug, note, saved_at) VALUES (:user, :key, :note, :now)`},
				Done:  "Recipe saved.", Then: "/saved"},
			{Name: "review", Label: "Post review", On: "recipes", Inputs: []kit.Input{{Name: "rating", Label: "Rating (1 to 5)", Kind: "int", Min: 1, Max: 5, Default: "5"}, {Name: "body", Label: "Review", Kind: "text", MaxLen: 2000}},
				Exec: []string{`INSERT INTO reviews (username, slug, rating, body, posted_at) VALUES (:user, :key, :rating, :body, :now)`},
				Done: "Review posted.", Then: "/my-reviews"},
			{Name: "unsave", Label: "Remove", On: "saved", Exec: []string{`DELETE FROM saved_recipes WHERE username = :user AND id = :key`}, Done: "Recipe removed from your saved recipes.", Then: "/saved"},
		},
		Histories: []kit.History{
			{Name: "saved", Title: "Saved recipes", Path: "/saved", Link: "/recipes/",
				SQL:     `SELECT s.id AS key, s.slug AS link, r.title, s.note, s.saved_at FROM saved_recipes s JOIN cat.recipes r ON r.slug = s.slug WHERE s.username = :user ORDER BY s.id DESC`,
				Columns: []kit.Column{{Key: "title", Label: "Recipe"}, {Key: "note", Label: "Note"}, {Key: "saved_at", Label: "Saved"}}},
			{Name: "my-reviews", Title: "My reviews", Path: "/my-reviews", Link: "/recipes/",
				SQL:     `SELECT v.id AS key, v.slug AS link, r.title, v.rating, v.body, v.posted_at FROM reviews v JOIN cat.recipes r ON r.slug = v.slug WHERE v.username = :user ORDER BY v.id DESC`,
				Columns: []kit.Column{{Key: "title", Label: "Recipe"}, {Key: "rating", Label: "Stars"}, {Key: "body", Label: "Review"}, {Key: "posted_at", Label: "Posted"}}},
		},
	}
}
