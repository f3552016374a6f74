// Package dictionary is the dictionary site (GUI, a kit spec): headwords
// with part of speech, pronunciation, definition and example; the persona
// keeps a word list.
//
// It imports internal/site/kit.
package dictionary

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/dictionary.sqlite).
const Name = "dictionary"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Wordhoard", Tagline: "Five thousand words, defined.",
		Schema: []string{`CREATE TABLE word_list (id INTEGER PRIMARY KEY, username TEXT NOT NULL, headword TEXT NOT NULL, note TEXT, added_at TEXT NOT NULL, UNIQUE (username, headword))`},
		Lists: []kit.List{{
			Name: "words", Title: "Words", Path: "/words",
			Select:  `SELECT headword AS key, headword AS title, pos, definition FROM words`,
			Search:  []string{"title", "definition"},
			Filters: []kit.Filter{{Name: "pos", Label: "Part of speech", Column: "pos", Options: []string{"noun", "verb", "adjective", "adverb"}}},
			Order:   "key",
			Columns: []kit.Column{{Key: "title", Label: "Word"}, {Key: "pos", Label: "Part of speech"}, {Key: "definition", Label: "Definition"}},
			Detail: kit.Detail{
				SQL:    `SELECT headword AS title, pos, pronunciation, definition, example FROM words WHERE headword = :key`,
				Fields: []kit.Column{{Key: "pos", Label: "Part of speech"}, {Key: "pronunciation", Label: "Pronunciation"}, {Key: "definition", Label: "Definition", Kind: "long"}, {Key: "example", Label: "Example", Kind: "long"}},
			},
		}},
		Actions: []kit.Action{
			{Name: "learn", Label: "Add to word list", On: "words", Inputs: []kit.Input{{Name: "note", Label: "Note", Kind: "text", MaxLen: 300, Optional: true}},
				Check: `SELECT 'the word is on your list already' FROM word_list WHERE username = :user AND headword = :key`,
				Exec:  []string{`INSERT INTO word_list (username, headword, note, added_at) VALUES (:user, :key, :note, :now)`},
				Done:  "Added to your word list.", Then: "/word-list"},
			{Name: "forget", Label: "Remove", On: "word-list", Exec: []string{`DELETE FROM word_list WHERE username = :user AND headword = :key`}, Done: "Removed from your word list.", Then: "/word-list"},
		},
		Histories: []kit.History{{Name: "word-list", Title: "Word list", Path: "/word-list", Link: "/words/",
			SQL:     `SELECT l.headword AS key, l.headword AS link, l.headword, w.definition, l.note, l.added_at FROM word_list l JOIN cat.words w ON w.headword = l.headword WHERE l.username = :user ORDER BY l.id DESC`,
			Columns: []kit.Column{{Key: "headword", Label: "Word"}, {Key: "definition", Label: "Definition"}, {Key: "note", Label: "Note"}, {Key: "added_at", Label: "Added"}}}},
	}
}
