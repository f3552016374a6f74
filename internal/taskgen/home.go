package taskgen

import (
	"fmt"
)

// homeFamilies are the task families of this file: household errands that
// keep the persona's notes and address book up to date from its websites
// (home_devices.go, home_library.go, home_courses.go).
func homeFamilies() []Family {
	return []Family{deviceSpendNote{}, libraryContact{}, courseFocusNote{}}
}

// homeCSVCheck is a verifier script: the home CSV at path has one row per
// key of want (column key, matched ignoring case), with the cells of cols
// equal to want's values (numbers by value, a leading $ and thousands
// separators ignored; text ignoring case), and no other row.
func homeCSVCheck(path, key string, cols []string, want map[string][]string) string {
	return fmt.Sprintf(`import json
from decimal import Decimal, InvalidOperation
from _verify_sdk import read_csv, result
want = %s
key = %q
cols = %s
def norm(v):
    v = (v or "").strip()
    n = v.lstrip("$").replace(",", "")
    try:
        return ("n", Decimal(n))
    except InvalidOperation:
        return ("s", v.lower())
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = {}
for r in rows:
    got.setdefault((r.get(key) or "").strip().upper(), []).append([norm(r.get(c)) for c in cols])
bad = sorted(k for k, v in want.items() if got.get(k.upper()) != [[norm(x) for x in v]])
extra = sorted(k for k in got if k not in {w.upper() for w in want})
result(not bad and not extra, f"missing or wrong rows: {bad}; rows that should not be there: {extra}")
`, pyJSON(want), key, pyJSON(cols), path, path)
}

// homeNoteCheck is a verifier script: exactly one note titled title in
// notebook (ignoring case) whose body's first non-empty line is first
// (ignoring case and surrounding spaces), that contains every string of
// contains (ignoring case), and that has, for each key of lines, a line
// naming the key with the number lines gives it (the per-course lines an
// instruction asks for).
func homeNoteCheck(notebook, title, first string, contains []string, lines map[string]int64) string {
	if contains == nil {
		contains = []string{}
	}
	if lines == nil {
		lines = map[string]int64{}
	}
	return fmt.Sprintf(`import json, re
from _verify_sdk import query, result
notebook, title, first = %s, %s, %s
contains = %s
per_line = %s
rows = query("notes", "SELECT n.body FROM notes n JOIN notebooks b ON b.id = n.notebook_id WHERE lower(b.name) = lower(?) AND lower(trim(n.title)) = lower(?)", (notebook, title))
if len(rows) != 1:
    result(False, f"{len(rows)} notes titled {title!r} in notebook {notebook!r}, want one")
    raise SystemExit
body = rows[0]["body"] or ""
lines = [l.strip() for l in body.splitlines() if l.strip()]
head = lines[0] if lines else ""
missing = [c for c in contains if c.lower() not in body.lower()]
def has_line(key, n):
    for l in lines[1:]:
        rest = l.lower().replace(key.lower(), " ", 1)
        if key.lower() in l.lower() and str(n) in re.findall(r"\d+", rest):
            return True
    return False
no_line = sorted(k for k, n in per_line.items() if not has_line(k, n))
ok = head.lower() == first.lower() and not missing and not no_line
result(ok, f"first line {head!r}, want {first!r}; missing {missing}; no line with the right count for {no_line}")
`, pyJSON(notebook), pyJSON(title), pyJSON(first), pyJSON(contains), pyJSON(lines))
}
