package reset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// mountOptions returns the per-mount and the file-system options of the
// mount at p, from /proc/self/mountinfo.
func mountOptions(t *testing.T, p string) (mount, super []string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	unescape := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	found := false
	for line := range strings.Lines(string(b)) {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(strings.TrimSpace(line), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 3 || unescape.Replace(f[4]) != p {
			continue
		}
		// The last mount at p is the one in effect.
		mount, super, found = strings.Split(f[5], ","), strings.Split(g[2], ","), true
	}
	if !found {
		t.Fatalf("%s is not a mount point", p)
	}
	return mount, super
}

// TestOverlayMountsNosuidNodev: the overlay and its tmpfs are mounted
// nosuid and nodev, after New and after every kind of Reset, and the tmpfs
// carries the default inode cap.
func TestOverlayMountsNosuidNodev(t *testing.T) {
	for _, s := range []*Overlay{{}, {Reset: ResetRemount}} {
		t.Run(s.Name(), func(t *testing.T) {
			lower := newLower(t, small)
			dir := filepath.Join(t.TempDir(), "i")
			in := newInstance(t, s, lower, dir)
			for round := range 2 {
				for _, p := range []string{dir, dir + ".rw"} {
					mount, _ := mountOptions(t, p)
					for _, want := range []string{"nosuid", "nodev"} {
						if !slices.Contains(mount, want) {
							t.Errorf("round %d: %s is mounted %s, without %s", round, p, strings.Join(mount, ","), want)
						}
					}
				}
				if _, super := mountOptions(t, dir+".rw"); !slices.Contains(super, fmt.Sprintf("nr_inodes=%d", DefaultInodes)) {
					t.Errorf("round %d: the tmpfs has %s, want nr_inodes=%d", round, strings.Join(super, ","), DefaultInodes)
				}
				if err := in.Reset(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestOverlayInodeCap: creating files past Inodes fails with ENOSPC while
// the bytes are far below Size; a reset frees them.
func TestOverlayInodeCap(t *testing.T) {
	lower := newLower(t, small)
	dir := filepath.Join(t.TempDir(), "i")
	in := newInstance(t, &Overlay{Inodes: 64}, lower, dir)
	flood := func() (int, error) {
		d := filepath.Join(dir, "home", "flood")
		if err := os.Mkdir(d, 0o755); err != nil {
			return 0, err
		}
		for i := range 1000 {
			f, err := os.Create(filepath.Join(d, fmt.Sprint(i)))
			if err != nil {
				return i, err
			}
			f.Close()
		}
		return 1000, nil
	}
	for round := range 2 {
		n, err := flood()
		if !errors.Is(err, syscall.ENOSPC) || n >= 64 {
			t.Fatalf("round %d: created %d empty files, then %v; want ENOSPC before 64", round, n, err)
		}
		if err := in.Reset(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (&Overlay{Inodes: -1}).New(t.Context(), lower, filepath.Join(t.TempDir(), "j")); err == nil || !strings.Contains(err.Error(), "Inodes") {
		t.Fatalf("a negative Inodes: %v", err)
	}
}

// TestOverlayOptionsNameNoPath: the overlay's file-system options, which
// every process that sees the mount reads in mountinfo (a sandboxed shell
// over the instance among them), name its layers by descriptor, never by
// the lower's or the instance's path, after New and after every kind of
// Reset; the content is still lower's.
func TestOverlayOptionsNameNoPath(t *testing.T) {
	for _, s := range []*Overlay{{}, {Reset: ResetRemount}} {
		t.Run(s.Name(), func(t *testing.T) {
			lower := newLower(t, small)
			dir := filepath.Join(t.TempDir(), "i")
			in := newInstance(t, s, lower, dir)
			for round := range 2 {
				_, super := mountOptions(t, dir)
				opts := strings.Join(super, ",")
				for _, p := range []string{lower, dir, filepath.Dir(lower), filepath.Dir(dir)} {
					if strings.Contains(opts, p) {
						t.Errorf("round %d: the overlay's options %q show the host path %s", round, opts, p)
					}
				}
				for _, key := range []string{"lowerdir=/proc/self/fd/", "upperdir=/proc/self/fd/", "workdir=/proc/self/fd/"} {
					if !strings.Contains(opts, key) {
						t.Errorf("round %d: the overlay's options %q lack %s", round, opts, key)
					}
				}
				if err := Diff(lower, dir); err != nil {
					t.Errorf("round %d: %v", round, err)
				}
				if err := in.Reset(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
