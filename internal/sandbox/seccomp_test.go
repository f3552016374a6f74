package sandbox

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// evalBPF runs a seccomp program over one syscall, as the kernel would
// (the few instructions seccompProgram uses), and returns its verdict.
func evalBPF(t *testing.T, p []insn, arch, nr uint32, arg0 uint64) uint32 {
	t.Helper()
	data := make([]byte, 64) // struct seccomp_data
	binary.LittleEndian.PutUint32(data[offNr:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	binary.LittleEndian.PutUint64(data[offArg0:], arg0)
	var a uint32
	for pc := 0; pc < len(p); pc++ {
		in := p[pc]
		switch in.code {
		case bpfLdWAbs:
			a = binary.LittleEndian.Uint32(data[in.k:])
		case bpfJeqK, bpfJgeK, bpfJsetK:
			var ok bool
			switch in.code {
			case bpfJeqK:
				ok = a == in.k
			case bpfJgeK:
				ok = a >= in.k
			default:
				ok = a&in.k != 0
			}
			if ok {
				pc += int(in.jt)
			} else {
				pc += int(in.jf)
			}
		case bpfRetK:
			return in.k
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, in.code)
		}
	}
	t.Fatal("the program runs off its end")
	return 0
}

// TestSeccompProgram checks the filter's verdict for every denied syscall,
// the argument checks, the architecture check and a sample of what the
// shell needs.
func TestSeccompProgram(t *testing.T) {
	p := seccompProgram()
	if len(p) > unix.BPF_MAXINSNS {
		t.Fatalf("%d instructions, over the kernel's %d", len(p), unix.BPF_MAXINSNS)
	}
	eperm, enosys := uint32(retErrno|uint32(unix.EPERM)), uint32(retErrno|uint32(unix.ENOSYS))
	type call struct {
		name string
		arch uint32
		nr   uint32
		arg0 uint64
		want uint32
	}
	calls := []call{
		{"read", archX86_64, unix.SYS_READ, 0, retAllow},
		{"execve", archX86_64, unix.SYS_EXECVE, 0, retAllow},
		{"clock_gettime", archX86_64, unix.SYS_CLOCK_GETTIME, 0, retAllow},
		{"io_uring_setup via i386", 0x40000003, 425, 0, retKillPro},
		{"x32 mount", archX86_64, x32Bit | unix.SYS_MOUNT, 0, enosys},
		{"x32 read", archX86_64, x32Bit | unix.SYS_READ, 0, enosys},
		{"clone3", archX86_64, unix.SYS_CLONE3, 0, enosys},
		// glibc's fork and pthread_create (clone fallback)
		{"clone fork", archX86_64, unix.SYS_CLONE, unix.CLONE_CHILD_SETTID | unix.CLONE_CHILD_CLEARTID | uint64(unix.SIGCHLD), retAllow},
		{"clone thread", archX86_64, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID, retAllow},
		{"clone with exit signal 0x80 bits", archX86_64, unix.SYS_CLONE, 0x80 | uint64(unix.SIGCHLD), retAllow},
		{"personality query", archX86_64, unix.SYS_PERSONALITY, 0xffffffff, retAllow},
		{"personality linux", archX86_64, unix.SYS_PERSONALITY, 0, retAllow},
		{"personality ADDR_NO_RANDOMIZE", archX86_64, unix.SYS_PERSONALITY, 0x0040000, eperm},
		{"personality READ_IMPLIES_EXEC", archX86_64, unix.SYS_PERSONALITY, 0x0400000, eperm},
	}
	for _, f := range []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET} {
		calls = append(calls, call{fmt.Sprintf("clone %#x", f), archX86_64, unix.SYS_CLONE, f | uint64(unix.SIGCHLD), eperm})
	}
	for _, s := range deniedSyscalls {
		calls = append(calls, call{s.name, archX86_64, s.nr, 0, eperm})
	}
	for _, c := range calls {
		if got := evalBPF(t, p, c.arch, c.nr, c.arg0); got != c.want {
			t.Errorf("%s: verdict %#x, want %#x", c.name, got, c.want)
		}
	}
	if n := len(seccompBytes()); n != 8*len(p) {
		t.Errorf("seccompBytes: %d bytes for %d instructions", n, len(p))
	}
}

// TestSeccompInSandbox: in a sandbox the denied syscalls fail with EPERM
// (clone3 with ENOSYS), unshare -U fails, and what the case-study shells
// run (bash, coreutils, python3 with threads and subprocesses, sqlite3)
// still works. Without the filter the same probes reach the kernel (EFAULT
// or EINVAL for the null arguments they pass).
func TestSeccompInSandbox(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	probe := `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, nr in [("io_uring_setup", 425), ("keyctl", 250), ("add_key", 248), ("bpf", 321), ("perf_event_open", 298), ("mount", 165), ("userfaultfd", 323), ("ptrace", 101), ("clone3", 435), ("setns", 308)]:
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, r, os.strerror(ctypes.get_errno()) if r < 0 else "ok")
'
unshare -U true 2>/dev/null; echo unshare -U: $?
unshare -n true 2>/dev/null; echo unshare -n: $?`
	home := newHome(t, 0, 0)
	got := mustSucceed(t, Options{Home: home}, probe)
	want := `io_uring_setup -1 Operation not permitted
keyctl -1 Operation not permitted
add_key -1 Operation not permitted
bpf -1 Operation not permitted
perf_event_open -1 Operation not permitted
mount -1 Operation not permitted
userfaultfd -1 Operation not permitted
ptrace -1 Operation not permitted
clone3 -1 Function not implemented
setns -1 Operation not permitted
unshare -U: 1
unshare -n: 1
`
	if got != want {
		t.Errorf("with the filter:\n%s\nwant:\n%s", got, want)
	}
	off := mustSucceed(t, Options{Home: home, noSeccomp: true}, probe)
	if !strings.Contains(off, "io_uring_setup -1 Bad address") || !strings.Contains(off, "keyctl -1 Invalid argument") {
		t.Errorf("without the filter the probes should reach the kernel:\n%s", off)
	}
	// The filter's status, its fd closed before the command, and what the
	// shell needs.
	out := mustSucceed(t, Options{Home: home}, `grep '^Seccomp:' /proc/self/status; for fd in 4 5; do [ -e /proc/self/fd/$fd ] && echo fd $fd open; done
python3 -c '
import subprocess, threading, sqlite3
t = threading.Thread(target=lambda: print("thread")); t.start(); t.join()
print(subprocess.run(["sh", "-c", "echo sub"], capture_output=True, text=True).stdout.strip())
print(sqlite3.connect(":memory:").execute("select 6*7").fetchone()[0])'
sqlite3 :memory: 'select 1+1'; seq 3 | sort -r | paste -sd, ; (sleep 0.1 & wait); echo bg done; date -u +%Y >/dev/null && echo date ok`)
	wantOut := "Seccomp:\t2\nthread\nsub\n42\n2\n3,2,1\nbg done\ndate ok\n"
	if out != wantOut {
		t.Errorf("the shell's tools under the filter:\n%q\nwant:\n%q", out, wantOut)
	}
}
