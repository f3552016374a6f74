package rl

import "testing"

// TestSegmentsSayWhyTheyStart: a segment opened by a compacted turn is a
// compaction, one opened by a prompt that does not extend the held
// tokens is a prefix break, and PrefixBreaks counts only those.
func TestSegmentsSayWhyTheyStart(t *testing.T) {
	turns := []Turn{
		{PromptIDs: []int{1, 2}, ResponseIDs: []int{3}},
		{PromptIDs: []int{1, 2, 3, 4}, ResponseIDs: []int{5}}, // extends
		{PromptIDs: []int{1, 2, 9, 4}, ResponseIDs: []int{6}}, // re-rendered: a break
		{PromptIDs: []int{1, 7}, ResponseIDs: []int{8}, Compacted: true},
		{PromptIDs: []int{1, 7, 8, 2}, ResponseIDs: []int{9}}, // extends
		{PromptIDs: []int{1}, ResponseIDs: []int{2}},          // a break
	}
	segs := Segments(turns, false)
	want := []string{StartFirst, StartPrefixBreak, StartCompaction, StartPrefixBreak}
	if len(segs) != len(want) {
		t.Fatalf("%d segments: %+v", len(segs), segs)
	}
	for i, s := range segs {
		if s.Start != want[i] {
			t.Fatalf("segment %d starts %q, want %q", i, s.Start, want[i])
		}
	}
	if n := PrefixBreaks(segs); n != 2 {
		t.Fatalf("PrefixBreaks = %d, want 2", n)
	}
	// A compacted turn that happens to extend still starts a compaction
	// segment, not a break.
	segs = Segments([]Turn{{PromptIDs: []int{1}, ResponseIDs: []int{2}}, {PromptIDs: []int{1, 2, 3}, ResponseIDs: []int{4}, Compacted: true}}, false)
	if len(segs) != 2 || segs[1].Start != StartCompaction || PrefixBreaks(segs) != 0 {
		t.Fatalf("%+v", segs)
	}
	if PrefixBreaks(nil) != 0 {
		t.Fatal("PrefixBreaks(nil) != 0")
	}
}
