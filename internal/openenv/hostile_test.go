package openenv_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/openenv"
)

// TestHostileEpisodesScored: an episode whose agent does one hostile thing
// to its own answer or world ends done with its last observation carrying
// V 0 and reward 0 (no partial credit when the answer or world is
// unverifiable; below 1 when a file was made unreadable), never as an
// episode "over unverified". Before the fix the 200 KB and the NUL answers
// failed the verifier's exec and the episode ended with an execution
// error. The names episode also needs the store to refuse x\xff and x\xfe
// (world.ErrAgentFault): without it the final world cannot be checked out.
func TestHostileEpisodesScored(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	tk := f.Tasks["wishlist-balance"]
	const mark = ".hostile-mark"
	sabotage := func(cmd string) []map[string]any {
		steps := []map[string]any{step("shell.run", map[string]any{"command": "touch ~/" + mark})}
		for _, s := range tk.Reference {
			steps = append(steps, step(s.Tool, s.Args))
		}
		return append(steps, step("shell.run", map[string]any{"command": "find ~ -type f -newer ~/" + mark + " ! -name " + mark + " " + cmd}))
	}
	for _, tc := range []struct {
		name   string
		steps  []map[string]any
		answer string
		fault  string // in the metadata; "" for none
	}{
		{"long-answer", nil, strings.Repeat("x", 200<<10), "MaxAnswerBytes"},
		{"nul-answer", nil, "done\x00and more", ""},
		{"names", []map[string]any{step("shell.run", map[string]any{"command": `printf a > "$HOME/x$(printf '\377')" && printf b > "$HOME/x$(printf '\376')"`})}, "done", ""}, // stored exactly (docs/world.md, "Names"): verified, V 0
		{"unreadable", sabotage("-exec chmod 000 {} +"), tk.Answer, ""},
		{"dir-for-file", sabotage(`| while IFS= read -r f; do rm -f "$f" && mkdir "$f"; done`), tk.Answer, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, url)
			c.result(reset(map[string]any{"task_id": tk.ID}))
			for _, s := range tc.steps {
				if r, raw := c.result(s); r.Done {
					t.Fatalf("step %v: %s", s, raw)
				}
			}
			m := c.call(step(openenv.AnswerTool, map[string]any{"text": tc.answer}))
			if m.Type != openenv.TypeObservation {
				t.Fatalf("the answer: %s %s, want the last observation with reward 0", m.Type, m.Data)
			}
			r := decodeResult(t, m)
			v := r.Observation.Verification
			if !r.Done || v == nil || v.V != 0 || r.Reward == nil || *r.Reward >= 1 || *r.Reward < 0 {
				t.Fatalf("last observation: %s", m.Data)
			}
			fault, _ := r.Metadata["fault"].(string)
			if tc.fault != "" && (*r.Reward != 0 || v.Passed != 0 || !strings.Contains(fault, tc.fault)) {
				t.Fatalf("an unverifiable answer or world: reward %v, passed %d, fault %q", *r.Reward, v.Passed, fault)
			}
			if tc.fault == "" && fault != "" {
				t.Errorf("fault %q", fault)
			}
			t.Logf("%s: reward %v, %d/%d criteria, fault %q", tc.name, *r.Reward, v.Passed, v.Total, fault)
		})
	}
}

func decodeResult(t *testing.T, m msg) openenv.Result {
	t.Helper()
	var r openenv.Result
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
