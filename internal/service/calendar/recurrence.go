package calendar

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxCount is the largest COUNT of a recurrence.
const MaxCount = 1000

// dayS is one day in seconds; all times are UTC, so days have no DST.
const dayS int64 = 24 * 60 * 60

// Rule is a parsed recurrence: every day or every week,
// Count occurrences in all or, when Count is 0, every occurrence that starts
// on or before the date Until. The zero Rule is a one-off event.
type Rule struct {
	Freq  string // "DAILY" or "WEEKLY"; "" for a one-off event
	Count int
	Until time.Time // midnight UTC of the last allowed start date
}

// String returns the canonical form stored in events.recurrence:
// "FREQ=WEEKLY;COUNT=4", "FREQ=DAILY;UNTIL=2026-03-20" or "".
func (r Rule) String() string {
	switch {
	case r.Freq == "":
		return ""
	case r.Count > 0:
		return fmt.Sprintf("FREQ=%s;COUNT=%d", r.Freq, r.Count)
	default:
		return fmt.Sprintf("FREQ=%s;UNTIL=%s", r.Freq, r.Until.Format(DateFormat))
	}
}

// step is the time between occurrences, in seconds.
func (r Rule) step() int64 {
	if r.Freq == "WEEKLY" {
		return 7 * dayS
	}
	return dayS
}

// ruleHelp is appended to every recurrence error.
const ruleHelp = `use "" for a one-off event, or FREQ=DAILY or FREQ=WEEKLY with exactly one of COUNT=n (1 to 1000 occurrences) or UNTIL=YYYY-MM-DD (last start date), e.g. "FREQ=WEEKLY;COUNT=4"`

// ParseRule parses a recurrence of the supported subset. Parts may come in
// any order and case; an "RRULE:" prefix is accepted. UNTIL is a date,
// YYYY-MM-DD or YYYYMMDD.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 6 && strings.EqualFold(s[:6], "RRULE:") {
		s = s[6:]
	}
	if s == "" {
		return Rule{}, nil
	}
	if len(s) > 100 {
		return Rule{}, fmt.Errorf("recurrence is %d characters, too long for the supported subset; %s", len(s), ruleHelp)
	}
	var r Rule
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.ToUpper(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return Rule{}, fmt.Errorf("recurrence %q: part %q is not NAME=VALUE; %s", s, part, ruleHelp)
		}
		if seen[k] {
			return Rule{}, fmt.Errorf("recurrence %q repeats %s; %s", s, k, ruleHelp)
		}
		seen[k] = true
		switch k {
		case "FREQ":
			switch f := strings.ToUpper(v); f {
			case "DAILY", "WEEKLY":
				r.Freq = f
			default:
				return Rule{}, fmt.Errorf("recurrence %q: FREQ=%s is not supported; %s", s, v, ruleHelp)
			}
		case "COUNT":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxCount {
				return Rule{}, fmt.Errorf("recurrence %q: COUNT must be a whole number from 1 to %d; %s", s, MaxCount, ruleHelp)
			}
			r.Count = n
		case "UNTIL":
			d, err := time.Parse(DateFormat, v)
			if err != nil {
				d, err = time.Parse("20060102", v)
			}
			if err != nil {
				return Rule{}, fmt.Errorf("recurrence %q: UNTIL=%s is not a date; %s", s, v, ruleHelp)
			}
			r.Until = d
		default:
			return Rule{}, fmt.Errorf("recurrence %q: %s is not supported; %s", s, k, ruleHelp)
		}
	}
	switch {
	case r.Freq == "":
		return Rule{}, fmt.Errorf("recurrence %q has no FREQ; %s", s, ruleHelp)
	case r.Count > 0 && !r.Until.IsZero():
		return Rule{}, fmt.Errorf("recurrence %q has both COUNT and UNTIL; %s", s, ruleHelp)
	case r.Count == 0 && r.Until.IsZero():
		return Rule{}, fmt.Errorf("recurrence %q has neither COUNT nor UNTIL (endless repeats are not supported); %s", s, ruleHelp)
	}
	return r, nil
}

// last returns the index (from 0) of the event's last occurrence, or -1 if
// it has none (UNTIL before the first start).
func (r Rule) last(start int64) int64 {
	switch {
	case r.Freq == "":
		return 0
	case r.Count > 0:
		return int64(r.Count) - 1
	}
	limit := r.Until.Unix() + dayS - 1 // any start on the UNTIL date
	if limit < start {
		return -1
	}
	return (limit - start) / r.step()
}

// span is one occurrence: Index from 1, start and end in Unix seconds.
type span struct {
	Index      int
	Start, End int64
}

// expand returns the occurrences of an event starting at start and lasting
// until end that overlap [from, to) (Unix seconds), in time order. It never
// iterates over occurrences outside the window.
func (r Rule) expand(start, end, from, to int64) []span {
	dur := end - start
	step := r.step()
	last := r.last(start)
	var k int64
	// The first occurrence that ends after from: start+k*step+dur > from.
	if x := from - dur - start; x >= 0 {
		k = x/step + 1
	}
	var out []span
	for ; k <= last; k++ {
		s := start + k*step
		if s >= to {
			break
		}
		out = append(out, span{Index: int(k) + 1, Start: s, End: s + dur})
	}
	return out
}

// parseTime parses an argument time as UTC: "YYYY-MM-DD HH:MM[:SS]",
// the same with a T, or RFC 3339 with an offset (converted to UTC).
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(time.Second), true
		}
	}
	return time.Time{}, false
}
