package sandbox

import (
	"strings"
	"testing"
)

// TestUIDsNeverRepeat: many goroutines draw from one allocator and no uid
// comes twice; an exhausted range is an error naming it.
func TestUIDsNeverRepeat(t *testing.T) {
	u := NewUIDs(500000, 4000)
	seen := DrawUIDs(t, 8, 500, u.Next)()
	if len(seen) != 4000 || u.Taken() != 4000 {
		t.Fatalf("%d distinct uids, %d taken, want 4000", len(seen), u.Taken())
	}
	for uid := range seen {
		if uid < 500000 || uid >= 504000 {
			t.Errorf("uid %d outside 500000..503999", uid)
		}
	}
	if _, err := u.Next(); err == nil || !strings.Contains(err.Error(), "the 4000 uids from 500000") {
		t.Errorf("the 4001st uid: %v, want an error naming the range", err)
	}
	var zero UIDs
	if uid, err := zero.Next(); err != nil || uid != DefaultFirstUID {
		t.Errorf("the zero allocator's first uid: %d, %v", uid, err)
	}
}
