package taskgen

// mediaFamilies are the task families of this file: errands of reading
// and study over the dictionary, archive and courses websites with the
// notes service (media_words.go, media_cite.go, media_points.go). The
// news and recipes sites have no logins in the test worlds, so no family
// here uses them yet.
func mediaFamilies() []Family {
	return []Family{wordPractice{}, citeReferences{}, coursePoints{}}
}

// mediaNoteCheck is the start of a verifier script that finds the one
// note titled title (ignoring case and outer spaces) in the final notes
// database, binding its body and its notebook's name, or fails.
func mediaNoteCheck(title string) string {
	return `import json
from _verify_sdk import query, result
title = ` + pyJSON(title) + `
try:
    notes = query("notes", "SELECT n.body, b.name FROM notes n JOIN notebooks b ON b.id = n.notebook_id WHERE lower(trim(n.title)) = lower(?)", (title,))
except Exception as e:
    result(False, f"no notes database: {e}")
    raise SystemExit
if len(notes) != 1:
    result(False, f"{len(notes)} notes titled {title!r}, want one")
    raise SystemExit
body, notebook = notes[0][0], notes[0][1]
`
}
