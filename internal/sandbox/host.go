package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// tools are the host programs Run executes, by absolute path.
type tools struct {
	bwrap, setpriv, prlimit, unshare, nsenter, shell string
}

// lookTools finds bwrap, setpriv, prlimit and the shell, and says what to
// install for whichever is missing.
func lookTools() (tools, error) {
	var t tools
	var missing []string
	look := func(name, pkg string) string {
		for _, dir := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
		missing = append(missing, fmt.Sprintf("%s (apt-get install -y %s)", name, pkg))
		return ""
	}
	t.bwrap = look("bwrap", "bubblewrap")
	t.prlimit = look("prlimit", "util-linux")
	if os.Geteuid() == 0 {
		t.setpriv = look("setpriv", "util-linux")
		t.unshare = look("unshare", "util-linux")
		t.nsenter = look("nsenter", "util-linux")
	}
	if !executable("/bin/sh") {
		missing = append(missing, "/bin/sh (apt-get install -y dash)")
	}
	t.shell = "/bin/sh"
	if executable("/bin/bash") {
		t.shell = "/bin/bash"
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("sandbox: missing %s", strings.Join(missing, ", "))
	}
	return t, nil
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Available reports whether sandboxes can run here: bwrap, prlimit and (as
// root) setpriv and unshare are installed and a trivial sandboxed `true` succeeds. The error
// says what is missing and how to fix it.
func Available() error {
	if _, err := lookTools(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sandbox-available-")
	if err != nil {
		return fmt.Errorf("sandbox: available: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("sandbox: available: %w", err)
	}
	if err := PrepareHome(dir, DefaultUID, DefaultGID); err != nil {
		return fmt.Errorf("sandbox: available: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, Options{Home: dir}, "true")
	if err != nil {
		return fmt.Errorf("sandbox: available: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("sandbox: available: `true` exited %d: %s", res.ExitCode, res.Stderr)
	}
	return nil
}

// userNSHint explains a bwrap failure that looks like user namespaces being
// unavailable, naming the sysctl that disables them.
func userNSHint(msg string) string {
	if !strings.Contains(msg, "namespace") && !strings.Contains(msg, "Operation not permitted") &&
		!strings.Contains(msg, "No permissions to create") {
		return ""
	}
	var off []string
	for _, s := range []struct{ file, bad string }{
		{"/proc/sys/kernel/unprivileged_userns_clone", "0"},
		{"/proc/sys/user/max_user_namespaces", "0"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"},
	} {
		file, bad := s.file, s.bad
		b, err := os.ReadFile(file)
		if err == nil && strings.TrimSpace(string(b)) == bad {
			name := strings.ReplaceAll(strings.TrimPrefix(file, "/proc/sys/"), "/", ".")
			off = append(off, name+"="+bad)
		}
	}
	if len(off) == 0 {
		return " (bwrap runs unprivileged and needs user namespaces; are they blocked by a container runtime's seccomp policy?)"
	}
	return fmt.Sprintf(" (bwrap runs unprivileged and needs user namespaces, disabled here by %s; flip it with sysctl -w)",
		strings.Join(off, ", "))
}

// searchable checks that uid/gid (with no supplementary groups) may reach
// path: every ancestor directory has the search bit for them.
func searchable(path string, uid, gid int) error {
	path = filepath.Clean(path)
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		var bit fs.FileMode
		switch {
		case int(st.Uid) == uid:
			bit = 0o100
		case int(st.Gid) == gid:
			bit = 0o010
		default:
			bit = 0o001
		}
		if fi.Mode().Perm()&bit == 0 {
			return fmt.Errorf("sandbox: %s is unreachable for sandbox uid %d: directory %s (mode %#o, owner %d:%d) lacks the search bit; chmod o+x it or place homes elsewhere",
				path, uid, dir, fi.Mode().Perm(), st.Uid, st.Gid)
		}
		if dir == "/" {
			return nil
		}
	}
}

// PrepareHome hands dir over to the sandbox user: chown -R uid:gid, never
// following symlinks (an os.Root confines the walk to dir). uid or gid 0
// means the default, 65534; root is never the sandbox user. When the caller
// is not root, Run sandboxes as the caller, so PrepareHome hands the home to
// the caller and ignores uid and gid. Run it while no sandbox is running
// over dir.
func PrepareHome(dir string, uid, gid int) error {
	if uid < 0 || gid < 0 {
		return errors.New("sandbox: prepare home: negative uid or gid")
	}
	uid, gid, _ = Options{UID: uid, GID: gid}.withIDDefaults().ids()
	if err := checkDir(dir); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("sandbox: prepare home: %w", err)
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return root.Lchown(name, uid, gid)
	})
	if err != nil {
		return fmt.Errorf("sandbox: prepare home %s: %w", dir, err)
	}
	return nil
}
