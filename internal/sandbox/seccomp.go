package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// The seccomp filter every sandboxed command runs under (bwrap --seccomp
// FD): a classic BPF program, written out here (no libseccomp, no cgo). It
// denies what an agent's shell never needs and what widens the kernel's
// attack surface, and allows everything else:
//
//   - a syscall of another architecture (the i386 entry, int 0x80, from an
//     x86_64 process) kills the process; x32 numbers get ENOSYS, as on a
//     kernel without x32;
//   - the denied syscalls (deniedSyscalls) fail with EPERM;
//   - clone with a namespace flag fails with EPERM; clone3, whose flags sit
//     in memory a filter cannot read, fails with ENOSYS, and glibc then
//     falls back to clone;
//   - personality is allowed only for the personas Docker's default profile
//     allows (PER_LINUX, PER_LINUX32, UNAME26 and the query 0xffffffff);
//     ADDR_NO_RANDOMIZE and the rest fail with EPERM;
//   - ptrace is denied whole, of the command's own children too: a filter
//     cannot tell whose pid it is given, no shell tool an agent runs needs
//     it (strace and gdb aside), and on old kernels a tracer could skip a
//     tracee's seccomp checks.
//
// The filter is defined for x86_64 only: elsewhere Run refuses to run
// (errSeccompArch) rather than run without it.

// deniedSyscalls fail with EPERM (x86_64 numbers).
var deniedSyscalls = []struct {
	name string
	nr   uint32
}{
	{"io_uring_setup", unix.SYS_IO_URING_SETUP},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER},
	{"keyctl", unix.SYS_KEYCTL},
	{"add_key", unix.SYS_ADD_KEY},
	{"request_key", unix.SYS_REQUEST_KEY},
	{"bpf", unix.SYS_BPF},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
	{"mount", unix.SYS_MOUNT},
	{"umount2", unix.SYS_UMOUNT2},
	{"open_tree", unix.SYS_OPEN_TREE},
	{"move_mount", unix.SYS_MOVE_MOUNT},
	{"fsopen", unix.SYS_FSOPEN},
	{"fsconfig", unix.SYS_FSCONFIG},
	{"fsmount", unix.SYS_FSMOUNT},
	{"fspick", unix.SYS_FSPICK},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR},
	{"pivot_root", unix.SYS_PIVOT_ROOT},
	{"chroot", unix.SYS_CHROOT},
	{"unshare", unix.SYS_UNSHARE},
	{"setns", unix.SYS_SETNS},
	{"ptrace", unix.SYS_PTRACE},
	{"process_vm_readv", unix.SYS_PROCESS_VM_READV},
	{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV},
	{"pidfd_getfd", unix.SYS_PIDFD_GETFD},
	{"kcmp", unix.SYS_KCMP},
	{"kexec_load", unix.SYS_KEXEC_LOAD},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD},
	{"init_module", unix.SYS_INIT_MODULE},
	{"finit_module", unix.SYS_FINIT_MODULE},
	{"delete_module", unix.SYS_DELETE_MODULE},
	{"swapon", unix.SYS_SWAPON},
	{"swapoff", unix.SYS_SWAPOFF},
	{"reboot", unix.SYS_REBOOT},
	{"userfaultfd", unix.SYS_USERFAULTFD},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
	{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT},
	{"acct", unix.SYS_ACCT},
	{"quotactl", unix.SYS_QUOTACTL},
	{"quotactl_fd", unix.SYS_QUOTACTL_FD},
	{"lookup_dcookie", unix.SYS_LOOKUP_DCOOKIE},
	{"fanotify_init", unix.SYS_FANOTIFY_INIT},
	{"iopl", unix.SYS_IOPL},
	{"ioperm", unix.SYS_IOPERM},
	{"uselib", unix.SYS_USELIB},
	{"syslog", unix.SYS_SYSLOG},
	{"settimeofday", unix.SYS_SETTIMEOFDAY},
	{"clock_settime", unix.SYS_CLOCK_SETTIME},
	{"clock_adjtime", unix.SYS_CLOCK_ADJTIME},
	{"adjtimex", unix.SYS_ADJTIMEX},
	{"vhangup", unix.SYS_VHANGUP},
}

// cloneNSFlags are clone(2)'s namespace flags (CLONE_NEWTIME, 0x80, is
// clone3's and unshare's only: in clone's flags it is the exit signal).
const cloneNSFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// allowedPersonalities are personality(2)'s arguments the filter lets by.
var allowedPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// Classic BPF and seccomp constants (linux/filter.h, linux/seccomp.h,
// linux/audit.h).
const (
	bpfLdWAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgeK    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJsetK   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRetK    = unix.BPF_RET | unix.BPF_K
	retAllow   = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno   = 0x00050000 // SECCOMP_RET_ERRNO | errno
	retKillPro = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	archX86_64 = 0xc000003e // AUDIT_ARCH_X86_64
	x32Bit     = 0x40000000 // __X32_SYSCALL_BIT

	// offsets in struct seccomp_data
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] (little endian)
)

// errSeccompArch is Run's error on a machine the filter is not written for.
var errSeccompArch = fmt.Errorf("sandbox: the seccomp filter is written for x86_64 (amd64), not %s: sandboxed commands are refused rather than run without it", runtime.GOARCH)

// insn is one struct sock_filter.
type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// seccompProgram builds the filter.
func seccompProgram() []insn {
	errno := func(e unix.Errno) insn { return insn{code: bpfRetK, k: retErrno | uint32(e)} }
	allow := insn{code: bpfRetK, k: retAllow}
	p := []insn{
		{code: bpfLdWAbs, k: offArch},
		{code: bpfJeqK, jt: 1, k: archX86_64},
		{code: bpfRetK, k: retKillPro},
		{code: bpfLdWAbs, k: offNr},
		{code: bpfJgeK, jf: 1, k: x32Bit},
		errno(unix.ENOSYS),
	}
	for _, s := range deniedSyscalls {
		p = append(p, insn{code: bpfJeqK, jf: 1, k: s.nr}, errno(unix.EPERM))
	}
	p = append(p,
		insn{code: bpfJeqK, jf: 1, k: unix.SYS_CLONE3},
		errno(unix.ENOSYS),
		// clone: deny a namespace flag in args[0].
		insn{code: bpfJeqK, jf: 4, k: unix.SYS_CLONE},
		insn{code: bpfLdWAbs, k: offArg0},
		insn{code: bpfJsetK, jf: 1, k: cloneNSFlags},
		errno(unix.EPERM),
		allow,
	)
	// personality: only the allowed personas.
	n := len(allowedPersonalities)
	p = append(p,
		insn{code: bpfJeqK, jf: uint8(n + 2), k: unix.SYS_PERSONALITY},
		insn{code: bpfLdWAbs, k: offArg0},
	)
	for i, v := range allowedPersonalities {
		p = append(p, insn{code: bpfJeqK, jt: uint8(n - i), k: v})
	}
	return append(p, errno(unix.EPERM), allow)
}

// seccompBytes is the filter as bwrap reads it: struct sock_filter[],
// native (little) endian.
var seccompBytes = sync.OnceValue(func() []byte {
	p := seccompProgram()
	b := make([]byte, 0, 8*len(p))
	for _, in := range p {
		b = binary.LittleEndian.AppendUint16(b, in.code)
		b = append(b, in.jt, in.jf)
		b = binary.LittleEndian.AppendUint32(b, in.k)
	}
	return b
})

// seccompFilter returns the filter, or errSeccompArch off x86_64.
func seccompFilter() ([]byte, error) {
	if runtime.GOARCH != "amd64" {
		return nil, errSeccompArch
	}
	return seccompBytes(), nil
}
