package rl

import "slices"

// Turn is one model call of a rollout as token ids: the whole prompt the
// model saw and what it answered.
type Turn struct {
	PromptIDs   []int
	ResponseIDs []int
	Logprobs    []float64 // per response token as the engine sampled them; nil means unknown (0)
	Compacted   bool      // the harness compacted the context before this turn
}

// Segment is one training sample: a maximal run of turns whose contexts
// form one causal chain. PromptIDs is its first turn's prompt (the shared
// prefix); ResponseIDs is everything after it, with LossMask 1 on tokens
// the model produced and 0 on the prompt tokens each later turn added, and
// Logprobs 0 where the mask is 0.
type Segment struct {
	FirstTurn int // index of the segment's first turn
	// Start is why the segment began: StartFirst (the rollout's first
	// turn), StartCompaction (a compacted turn) or StartPrefixBreak (a
	// turn whose prompt does not extend the held tokens: a server that
	// takes messages and a template that re-renders the past differently).
	Start       string
	Turns       int // how many turns it holds
	PromptIDs   []int
	ResponseIDs []int
	LossMask    []int
	Logprobs    []float64
}

// The reasons a segment starts (Segment.Start).
const (
	StartFirst       = "first"
	StartCompaction  = "compaction"
	StartPrefixBreak = "prefix_break"
)

// PrefixBreaks is how many of segs began because a turn's prompt did not
// extend the held tokens, not because of a compaction: a batch's
// stats.prefix_breaks. Token mode (the harness holding the sequence) makes
// it 0 by construction.
func PrefixBreaks(segs []Segment) int {
	n := 0
	for _, s := range segs {
		if s.Start == StartPrefixBreak {
			n++
		}
	}
	return n
}

// Trainable is the number of tokens the segment trains (LossMask 1).
func (s Segment) Trainable() int {
	n := 0
	for _, m := range s.LossMask {
		n += m
	}
	return n
}

// Segments builds a rollout's segment samples from its turns. A turn whose
// prompt extends the tokens held so far (the segment's prompt and response
// ids) appends to the segment, its new prompt part with loss mask 0 and its
// response with loss mask 1; anything else closes the segment and starts a
// new one, and so does a compacted turn even when its prompt happens to
// extend the held tokens; each segment says why it started (Start,
// PrefixBreaks counts the breaks). With formatFailure set (the rollout stopped on a
// format failure in its last turn) only the last turn's response tokens are
// trainable, as PAPER.md says of a format-failed rollout.
func Segments(turns []Turn, formatFailure bool) []Segment {
	var segs []Segment
	var held []int
	for i, t := range turns {
		last := len(segs) - 1
		extends := last >= 0 && !t.Compacted && len(t.PromptIDs) >= len(held) &&
			slices.Equal(t.PromptIDs[:len(held)], held)
		if !extends {
			start := StartPrefixBreak
			switch {
			case last < 0:
				start = StartFirst
			case t.Compacted:
				start = StartCompaction
			}
			segs = append(segs, Segment{FirstTurn: i, Start: start, PromptIDs: slices.Clone(t.PromptIDs)})
			last++
			held = slices.Clone(t.PromptIDs)
		} else {
			s := &segs[last]
			added := t.PromptIDs[len(held):]
			s.ResponseIDs = append(s.ResponseIDs, added...)
			s.LossMask = append(s.LossMask, make([]int, len(added))...)
			s.Logprobs = append(s.Logprobs, make([]float64, len(added))...)
			held = append(held, added...)
		}
		s := &segs[last]
		s.Turns++
		mask := 1
		if formatFailure && i != len(turns)-1 {
			mask = 0
		}
		for j, id := range t.ResponseIDs {
			s.ResponseIDs = append(s.ResponseIDs, id)
			s.LossMask = append(s.LossMask, mask)
			lp := 0.0
			if mask == 1 && j < len(t.Logprobs) {
				lp = t.Logprobs[j]
			}
			s.Logprobs = append(s.Logprobs, lp)
		}
		held = append(held, t.ResponseIDs...)
	}
	return segs
}

// Trainable is L_j, a rollout's trainable tokens over all its segments.
func Trainable(segs []Segment) int {
	n := 0
	for _, s := range segs {
		n += s.Trainable()
	}
	return n
}

// TokenWeight is the loss weight of one trainable token of a rollout with
// trainable tokens L_j, in a group of rollouts trained rollouts, in a step of
// groups groups: token-mean within the rollout (1/L_j, over all its
// segments), rollout-mean within the group, group-mean within the step.
// Every segment of the rollout carries the same weight and the rollout's
// advantage. It is 0 when any count is not positive.
func TokenWeight(trainable, rollouts, groups int) float64 {
	if trainable <= 0 || rollouts <= 0 || groups <= 0 {
		return 0
	}
	return 1 / (float64(trainable) * float64(rollouts) * float64(groups))
}
