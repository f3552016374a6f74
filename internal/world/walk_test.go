package world

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func walkAll(t *testing.T, root, sub string, fn WalkFunc) (*SkipList, []string) {
	t.Helper()
	var got []string
	skips, err := Walk(context.Background(), root, sub, func(e *Entry) error {
		got = append(got, e.Kind+" "+e.Path)
		if fn != nil {
			return fn(e)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return skips, got
}

// TestWalkOrder: Walk visits what filepath.WalkDir visits, in its order,
// with each directory closed by an EntryDirEnd.
func TestWalkOrder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/a/b", "home/a-c", "home/z", "db"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range []string{"home/a/b/x", "home/a-c/y", "home/a.txt", "db/shop.sqlite"} {
		os.WriteFile(filepath.Join(root, f), []byte("content"), 0o640)
	}
	os.Symlink("/etc/passwd", filepath.Join(root, "home/z/link"))
	var want []string
	filepath.WalkDir(filepath.Join(root, "home"), func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if rel != "home" {
			want = append(want, rel)
		}
		return err
	})
	_, got := walkAll(t, root, "home", func(e *Entry) error {
		if e.Kind == EntryFile {
			b, err := e.ReadAll()
			if err != nil || string(b) != "content" || e.Perm != 0o640 {
				return fmt.Errorf("%s: %q %v %v", e.Path, b, e.Perm, err)
			}
		}
		if e.Kind == EntrySymlink && e.Target != "/etc/passwd" {
			return fmt.Errorf("%s: target %q", e.Path, e.Target)
		}
		return nil
	})
	var paths []string
	for _, g := range got {
		kind, p, _ := strings.Cut(g, " ")
		if kind != EntryDirEnd {
			paths = append(paths, p)
		}
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("Walk visited\n%s\nwant (filepath.WalkDir)\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
	if i := strings.Index(strings.Join(got, "|"), "dir home/a|dir home/a/b|file home/a/b/x|dir-end home/a/b|dir-end home/a|"); i < 0 {
		t.Errorf("dir-end entries misplaced: %v", got)
	}
	if _, got := walkAll(t, root, "nothing", nil); len(got) != 0 {
		t.Errorf("missing sub: %v", got)
	}
}

// skipReasons walks root/home and returns the skip list and its reasons by
// path, failing if fn sees a path containing avoid.
func skipReasons(t *testing.T, root, avoid string) (*SkipList, map[string]string) {
	t.Helper()
	skips, got := walkAll(t, root, "home", nil)
	for _, g := range got {
		if strings.Contains(g, avoid) {
			t.Errorf("visited %.80s", g)
		}
	}
	m := map[string]string{}
	for _, s := range skips.Entries {
		m[s.Path] = s.Reason
	}
	return skips, m
}

// TestWalkLimits: past the path-length and size limits, and for fifos, Walk
// skips with a reason; the list keeps MaxSkipEntries and counts all.
func TestWalkLimits(t *testing.T) {
	t.Run("path length", func(t *testing.T) {
		root := t.TempDir()
		long := strings.Repeat("n", 250)
		p := filepath.Join(root, "home")
		for range 9 { // 4 + 9*251 > MaxWalkPath
			p = filepath.Join(p, long)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "f"), nil, 0o644)
		skips, _ := skipReasons(t, root, "/f")
		if skips.Count != 1 || !strings.HasSuffix(skips.Entries[0].Path, "/"+long) || len(skips.Entries[0].Path) <= MaxWalkPath ||
			!strings.Contains(skips.Entries[0].Reason, "longer than 2048 bytes") {
			t.Errorf("skipped %+v", skips)
		}
	})
	t.Run("sparse file", func(t *testing.T) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, "home"), 0o755)
		f := filepath.Join(root, "home", "sparse")
		os.WriteFile(f, nil, 0o644)
		if err := os.Truncate(f, MaxWalkFileSize+1); err != nil {
			t.Fatal(err)
		}
		_, reasons := skipReasons(t, root, "sparse")
		if !strings.Contains(reasons["home/sparse"], "larger than 1024 MiB") {
			t.Errorf("skipped %v", reasons)
		}
	})
	t.Run("many sparse files", func(t *testing.T) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, "home"), 0o755)
		n := MaxWalkBytes/MaxWalkFileSize + 2
		for i := range n {
			f := filepath.Join(root, "home", fmt.Sprintf("sparse%d", i))
			os.WriteFile(f, nil, 0o644)
			if err := os.Truncate(f, MaxWalkFileSize); err != nil {
				t.Fatal(err)
			}
		}
		skips, reasons := skipReasons(t, root, "nothing to avoid")
		if skips.Count != 2 || !strings.Contains(reasons[fmt.Sprintf("home/sparse%d", n-1)], "past the walk's budget") {
			t.Errorf("%d sparse files of 1 GiB: skipped %v", n, reasons)
		}
		// A walk of the whole world (the store's) leaves out the same files
		// of home as a walk of home (the hash's), whatever lies before home.
		os.Mkdir(filepath.Join(root, "db"), 0o755)
		big := filepath.Join(root, "db", "big.sqlite")
		os.WriteFile(big, nil, 0o644)
		if err := os.Truncate(big, MaxWalkFileSize); err != nil {
			t.Fatal(err)
		}
		all, err := Walk(context.Background(), root, "", func(*Entry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		var inHome []Skipped
		for _, e := range all.Entries {
			if strings.HasPrefix(e.Path, "home/") {
				inHome = append(inHome, e)
			}
		}
		if len(inHome) != len(skips.Entries) || inHome[0].Path != skips.Entries[0].Path {
			t.Errorf("the whole world's walk left out %v of home, home's walk %v", inHome, skips.Entries)
		}
	})
	t.Run("many fifos", func(t *testing.T) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, "home"), 0o755)
		for i := range MaxSkipEntries + 5 {
			syscall.Mkfifo(filepath.Join(root, "home", fmt.Sprintf("pipe%03d", i)), 0o644)
		}
		skips, reasons := skipReasons(t, root, "pipe")
		if skips.Count != MaxSkipEntries+5 || len(skips.Entries) != MaxSkipEntries {
			t.Fatalf("skipped %d (%d listed), want %d (%d listed)", skips.Count, len(skips.Entries), MaxSkipEntries+5, MaxSkipEntries)
		}
		if r := reasons["home/pipe000"]; !strings.HasPrefix(r, "fifo: ") {
			t.Errorf("pipe000 skipped with %q", r)
		}
		if err := skips.Err(); err == nil || !strings.Contains(err.Error(), "home/pipe000: fifo: ") || !strings.Contains(err.Error(), "and 104 more") {
			t.Errorf("Err() = %v", err)
		}
	})
}

// TestWalkChanged: a file fn reports changed is read again, then skipped.
func TestWalkChanged(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "home"), 0o755)
	os.WriteFile(filepath.Join(root, "home", "f"), []byte("x"), 0o644)
	calls := 0
	skips, _ := walkAll(t, root, "", func(e *Entry) error {
		if e.Kind == EntryFile {
			calls++
			return fmt.Errorf("wrapped: %w", ErrChanged)
		}
		return nil
	})
	if calls != walkRetries || skips.Count != 1 || skips.Entries[0].Path != "home/f" || !strings.Contains(skips.Entries[0].Reason, "a command was still writing it") {
		t.Errorf("calls %d, skips %+v", calls, skips)
	}
	// A file that grows while it is read is changed.
	f := filepath.Join(root, "home", "f")
	_, err := Walk(context.Background(), root, "home", func(e *Entry) error {
		os.WriteFile(f, []byte("longer"), 0o644)
		_, err := e.ReadAll()
		if !errors.Is(err, ErrChanged) {
			t.Errorf("ReadAll of a file that grew: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
