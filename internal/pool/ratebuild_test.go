package pool

import (
	"path/filepath"
	"testing"
	"time"
)

// TestRateBuildKeepsRatings: rebuilding the index (pool split, pool run)
// reads each task's ratings back from its gate/rate/*/rating.json, by
// slug, beside the gate's difficulty; a rating file that cannot be read is
// an error, not a rating lost in silence.
func TestRateBuildKeepsRatings(t *testing.T) {
	dir := t.TempDir()
	fakeOutcomes(t, dir, 2, 0)
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, rt := range []Rating{
		{Agent: "model b (wildawm harness)", Slug: "b.wildawm", K: 3, Level: "medium", HintFree: 2, WithHint: 3, RatedAt: at},
		{Agent: "model a (opencode harness)", Slug: "a.opencode", K: 8, Level: "too_easy", HintFree: 8, WithHint: 8, RatedAt: at},
	} {
		if err := saveJSON(filepath.Join(dir, "task-000", RateDir, rt.Slug, RatingFile), rt); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Build(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := p.Tasks[0]
	if e.ID != "task-000" || e.Difficulty != "hard" || len(e.Ratings) != 2 || e.Ratings[0].Slug != "a.opencode" || e.Ratings[1].Level != "medium" || !e.Ratings[1].RatedAt.Equal(at) {
		t.Fatalf("entry %+v: want the gate's difficulty and both ratings, by slug", e)
	}
	if len(p.Tasks[1].Ratings) != 0 {
		t.Errorf("an unrated task has ratings: %+v", p.Tasks[1].Ratings)
	}
	st := &Stats{}
	st.AddRatings(p)
	if len(st.Rerated) != 2 || st.Rerated[0].Agent != "model a (opencode harness)" || st.Rerated[1].HintFree != 2.0/3 || st.Rerated[0].Levels["too_easy"] != 1 {
		t.Errorf("figures %+v", st.Rerated)
	}
	if err := saveJSON(filepath.Join(dir, "task-001", RateDir, "c.wildawm", RatingFile), "not a rating"); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(dir, nil); err == nil {
		t.Error("Build read past a rating.json it cannot decode")
	}
}
