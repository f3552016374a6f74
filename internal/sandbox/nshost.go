package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/scratch"
)

// Host is a small mount namespace the sandboxes are cloned from. Creating
// a sandbox copies the mount table of the namespace it starts in, under a
// kernel lock that every mount and unmount also takes; in the caller's
// namespace that table holds two mounts per live instance (its overlay and
// tmpfs), so with hundreds of instances each command, and each reset
// waiting on the lock, pays for all of them. A Host's namespace was copied
// once, when it was made, and made private: mounts made later in the
// caller's namespace (new instances) do not appear in it. Run with
// Options.Host binds a command's Home and ReadOnly paths into Host's
// shared directory (Dir), where they appear in the Host's namespace too,
// starts the sandbox chain there, and unmounts them when it ends: the
// table a sandbox copies holds the host's own mounts and those of the
// commands running at the time, whatever the number of instances.
//
// A Host needs root (mounts). Make it before the instances, so that its
// namespace does not hold theirs; Close it when done.
type Host struct {
	dir    string
	ns     string // the namespace: /proc/PID/ns/mnt of the holder (its pid is not reused before Close reaps it)
	holder *exec.Cmd
	temp   *scratch.Root // dir, when NewHost made it: locked while the Host lives, removed by Close
	etc    string        // a copy of the /etc entries sandboxes see, bound at /etc in one mount
	next   atomic.Int64
	mu     sync.Mutex
	closed bool
}

// NewHost makes a Host whose shared directory is dir (created; it must not
// be in use by another Host, and every sandbox uid must be able to search
// its parents); "" is a fresh directory in the system's temporary
// directory, removed by Close: a scratch root (internal/scratch) locked
// for the Host's life, and the roots of Hosts whose process died are
// unmounted and removed first. A directory left mounted by a process that
// was killed is unmounted first.
func NewHost(ctx context.Context, dir string) (*Host, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("sandbox: a Host needs root (it mounts): run without one")
	}
	t, err := lookTools()
	if err != nil {
		return nil, err
	}
	var temp *scratch.Root
	if dir == "" {
		// The roots of Hosts whose process died go first (the rule every
		// long-lived command's scratch follows: internal/scratch).
		if temp, _, err = scratch.Claim(os.TempDir(), tempPrefix); err != nil {
			return nil, fmt.Errorf("sandbox: host: %w", err)
		}
		dir = temp.Dir()
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: host: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: host: %w", err)
	}
	// Every uid must reach the binds: nobody stands for them.
	if err := searchable(dir, DefaultUID, DefaultGID); err != nil {
		return nil, fmt.Errorf("sandbox: host directory: %w", err)
	}
	unix.Unmount(dir, unix.MNT_DETACH) // a stale one of a killed process
	// dir becomes a mount of its own, in a peer group of its own: what is
	// mounted below it here propagates to the holder's copy, and nowhere
	// else (a bind of a shared / would join /'s group).
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("sandbox: host: bind %s: %w", dir, err)
	}
	h := &Host{dir: dir, temp: temp, etc: filepath.Join(dir, ".etc")}
	fail := func(err error) (*Host, error) {
		unix.Unmount(dir, unix.MNT_DETACH)
		if temp != nil {
			temp.Release()
		}
		return nil, err
	}
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		return fail(fmt.Errorf("sandbox: host: make %s private: %w", dir, err))
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		return fail(fmt.Errorf("sandbox: host: make %s shared: %w", dir, err))
	}
	// The /etc entries, copied once (symlinks as symlinks): one bind in
	// each sandbox instead of one per entry. They live in a tmpfs of
	// their own, so that the sandbox's mountinfo shows that bind's root as
	// /, not as the Host's path; with empty ld.so.preload and faketimerc
	// for Options.Clock's files to be bound over.
	os.RemoveAll(h.etc)
	if err := os.Mkdir(h.etc, 0o755); err != nil {
		return fail(fmt.Errorf("sandbox: host: %w", err))
	}
	if err := unix.Mount("tmpfs", h.etc, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=0755"); err != nil {
		return fail(fmt.Errorf("sandbox: host: mount a tmpfs at %s: %w", h.etc, err))
	}
	if err := copyEtc(h.etc); err != nil {
		return fail(fmt.Errorf("sandbox: host: copy /etc: %w", err))
	}
	for _, name := range clockFiles {
		if err := os.WriteFile(filepath.Join(h.etc, name), nil, 0o644); err != nil {
			return fail(fmt.Errorf("sandbox: host: %w", err))
		}
	}
	// The holder: a copy of this namespace in which every mount but dir is
	// made private (no propagation from here), then a sleep holding it.
	script := `set -e
while read -r _ _ _ _ mp _; do
  case "$mp" in "$1") ;; *) mount --make-private "$(printf '%b' "$mp")" 2>/dev/null || true ;; esac
done < /proc/self/mountinfo
printf .
exec sleep infinity`
	cmd := exec.Command(t.unshare, "--mount", "--propagation", "unchanged", "--", "/bin/sh", "-c", script, "holder", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	var stderr capWriter
	stderr.max = 4096
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("sandbox: host: start %s: %w", t.unshare, err))
	}
	ready := make(chan error, 1)
	go func() {
		b, err := bufio.NewReader(out).ReadByte()
		if err == nil && b != '.' {
			err = fmt.Errorf("unexpected %q", b)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(10 * time.Second):
		err = errors.New("no answer in 10s")
	}
	if err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		return fail(fmt.Errorf("sandbox: host: the namespace holder: %v: %s", err, stderr.buf.String()))
	}
	h.ns, h.holder = "/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/mnt", cmd
	return h, nil
}

// Dir is the shared directory.
func (h *Host) Dir() string { return h.dir }

// Close ends the holder and unmounts the shared directory. Commands
// running in the Host's namespace keep it until they end.
func (h *Host) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	syscall.Kill(-h.holder.Process.Pid, syscall.SIGKILL)
	h.holder.Wait()
	if err := unix.Unmount(h.dir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("sandbox: host: unmount %s: %w", h.dir, err)
	}
	if h.temp != nil {
		// Release detaches whatever is still bound below (never recursing
		// into a home) before it removes the directory.
		return h.temp.Release()
	}
	return nil
}

// binds is one command's view of its paths through a Host.
type binds struct {
	dir  string
	home string
	ro   []Mount
}

// bind binds o's Home and ReadOnly host paths below a fresh directory of
// the shared one (recursively: mounts below them come along).
func (h *Host) bind(o Options) (*binds, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, errors.New("sandbox: Options.Host is closed")
	}
	b := &binds{dir: filepath.Join(h.dir, strconv.FormatInt(h.next.Add(1), 10))}
	if err := os.Mkdir(b.dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: host: %w", err)
	}
	place := func(src, name string) (string, error) {
		dst := filepath.Join(b.dir, name)
		fi, err := os.Stat(src)
		if err != nil {
			return "", err
		}
		if fi.IsDir() {
			err = os.Mkdir(dst, 0o755)
		} else {
			err = os.WriteFile(dst, nil, 0o644)
		}
		if err != nil {
			return "", err
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return "", fmt.Errorf("bind %s: %w", src, err)
		}
		return dst, nil
	}
	var err error
	if b.home, err = place(o.Home, "home"); err != nil {
		b.release()
		return nil, fmt.Errorf("sandbox: host: %w", err)
	}
	for i, m := range o.ReadOnly {
		p, err := place(m.Host, "ro"+strconv.Itoa(i))
		if err != nil {
			b.release()
			return nil, fmt.Errorf("sandbox: host: %w", err)
		}
		b.ro = append(b.ro, Mount{Host: p, Path: m.Path})
	}
	return b, nil
}

// release unmounts a command's binds (lazily: a process of the command
// that outlived it keeps its view) and removes their directory.
func (b *binds) release() {
	entries, _ := os.ReadDir(b.dir)
	for _, e := range entries {
		p := filepath.Join(b.dir, e.Name())
		unix.Unmount(p, unix.MNT_DETACH)
		os.Remove(p)
	}
	os.Remove(b.dir)
}

// tempPrefix names the temporary directories of Hosts (scratch roots):
// PREFIX PID - random.
const tempPrefix = "wildawm-sandbox-host-"

// copyEtc copies the /etc entries sandboxes see into dst (a directory) as bwrap's
// per-entry binds show them: an entry that is a symlink as what it points
// to, below it symlinks as they are, every mode and owner kept (a
// directory the sandbox uid may not read stays so).
func copyEtc(dst string) error {
	for _, name := range etcEntries() {
		top := filepath.Join("/etc", name)
		src, err := filepath.EvalSymlinks(top)
		if err != nil {
			continue // absent or dangling: as --ro-bind-try
		}
		err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			to := filepath.Join(dst, name, rel)
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			switch {
			case info.Mode()&os.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				if err := os.Symlink(target, to); err != nil {
					return err
				}
			case info.IsDir():
				if err := os.Mkdir(to, 0o700); err != nil {
					return err
				}
			case info.Mode().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if err := os.WriteFile(to, b, 0o600); err != nil {
					return err
				}
			default:
				return nil // sockets, devices: not for a sandbox
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return fmt.Errorf("%s: no owner", p)
			}
			if err := os.Lchown(to, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
			if info.Mode()&os.ModeSymlink == 0 {
				return os.Chmod(to, info.Mode().Perm()|info.Mode()&(os.ModeSetgid|os.ModeSticky))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
