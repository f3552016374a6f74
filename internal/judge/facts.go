package judge

import (
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// minMistake is the shortest wrong value the judges look for: a shorter
// one (a digit, a two-letter word) shows up by chance.
const minMistake = 4

// mistake is a fact's wrong value found in a world where the reference's
// shows its value.
type mistake struct {
	fact         string
	value, wrong string
}

// declaredMistake is the first of the task's declared mistakes (a fact's
// wrong value, task.Fact) that text shows while ref, the same place after
// the reference completion, shows the fact's value and not the wrong one:
// the world carries an error the task itself names (a distractor chosen,
// a value misread). The judges read the task, never the agents: any
// agent that ends with the wrong value is caught alike.
func declaredMistake(t *task.Task, text, ref string) (mistake, bool) {
	if t == nil {
		return mistake{}, false
	}
	for _, sf := range t.Facts() {
		for _, fm := range sf.Subs() {
			if len(fm.Wrong) < minMistake || fm.Wrong == fm.Value {
				continue
			}
			if strings.Contains(text, fm.Wrong) && !strings.Contains(ref, fm.Wrong) && strings.Contains(ref, fm.Value) {
				return mistake{sf.ID, fm.Value, fm.Wrong}, true
			}
		}
	}
	return mistake{}, false
}

// maxDiffFile bounds how much of a changed home file the replay judge
// reads for declared mistakes.
const maxDiffFile = 1 << 20

// diffText is what a diff adds and changes, as text: the rows added, the
// changed columns' new values, and the contents of the home files added
// or changed in the world at root.
func diffText(d *state.Diff, root string) string {
	var b strings.Builder
	for _, tb := range d.Tables {
		for _, r := range tb.Added {
			j, _ := json.Marshal(r)
			b.Write(j)
			b.WriteByte('\n')
			writeValues(&b, r)
		}
		for _, c := range tb.Changed {
			writeValues(&b, c.After)
		}
	}
	for _, f := range d.Files {
		if f.Change == state.Deleted || f.Kind != "file" {
			continue
		}
		p, err := world.HomePath(root, f.Path)
		if err != nil {
			continue
		}
		fh, err := os.Open(p)
		if err != nil {
			continue
		}
		io.Copy(&b, io.LimitReader(fh, maxDiffFile))
		fh.Close()
		b.WriteByte('\n')
	}
	return b.String()
}

// writeValues writes a row's text values as they are (JSON would escape
// quotes and newlines the facts carry plainly).
func writeValues(b *strings.Builder, r state.Row) {
	for _, v := range r {
		if s, ok := v.(string); ok {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
}
