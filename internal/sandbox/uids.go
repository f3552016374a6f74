package sandbox

import (
	"fmt"
	"sync"
)

// DefaultFirstUID is the first uid a zero UIDs hands out; DefaultUIDCount
// how many it has.
const (
	DefaultFirstUID = 200000
	DefaultUIDCount = 1 << 20
)

// UIDs hands out the unprivileged uids of one process's sandboxes (an
// instance's shell, a verifier's or a mutation check's scripts), each at
// most once, so that no two sandboxes of the process share a uid and one's
// processes never count against another's process limit (RLIMIT_NPROC is
// per uid). A process makes one and gives it to everything that starts
// sandboxes; the zero value hands out DefaultUIDCount uids from
// DefaultFirstUID. Safe for concurrent use.
type UIDs struct {
	// First is the first uid handed out (0: DefaultFirstUID); Count how
	// many there are (0: DefaultUIDCount).
	First, Count int

	mu   sync.Mutex
	next int
}

// NewUIDs returns an allocator of the count uids from first.
func NewUIDs(first, count int) *UIDs { return &UIDs{First: first, Count: count} }

// Next returns a uid no earlier call returned. It fails when all are
// taken, naming the range.
func (u *UIDs) Next() (int, error) {
	first, count := u.First, u.Count
	if first == 0 {
		first = DefaultFirstUID
	}
	if count == 0 {
		count = DefaultUIDCount
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if first < 1 || count < 0 || u.next >= count {
		return 0, fmt.Errorf("sandbox: no uid left: the %d uids from %d are all taken (UIDs.First, UIDs.Count)", count, first)
	}
	uid := first + u.next
	u.next++
	return uid, nil
}

// Taken is how many uids Next has handed out.
func (u *UIDs) Taken() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.next
}
