// Package sandbox runs one shell command over a persona's home directory
// inside a bubblewrap sandbox, for the agent's shell tool and for verifier
// scripts. It imports internal/world (for Clock) and nothing else of the
// project. It is not part of the deterministic core: Run reads the wall
// clock to measure Duration.
//
// Glossary:
//   - Options: what to run over (Home, ReadOnly mounts), as whom (UID, GID)
//     and within which limits (Timeout, MaxOutput, MaxProcs); the zero value
//     of every field means its default.
//   - Mount: an extra read-only bind of a host directory or file.
//   - Result: what a command did (output, exit code, TimedOut, Truncated).
//     A command that fails or times out is a Result; an error means the
//     sandbox itself could not run.
//   - Available: whether this machine can run sandboxes, and what to install
//     when it cannot.
//   - UIDs: the uid allocator of a process's sandboxes: each uid at most
//     once, so no two sandboxes share one (and a process limit).
//   - PrepareHome: hand a home over to the sandbox uid (chown -R, never
//     following symlinks).
//   - Host: a small mount namespace the sandboxes are cloned from (see
//     below), so that a command's cost does not grow with the caller's
//     mounts.
//
// # How a command is run
//
// As root, Run drops privileges before bubblewrap so that the sandbox user
// is never host root:
//
//	unshare --pid --fork --kill-child -- prlimit --nproc=N:N --core=0:0 -- \
//	  setpriv --reuid=U --regid=G --clear-groups --inh-caps=-all --bounding-set=-all -- \
//	  bwrap --unshare-all --unshare-user --disable-userns --die-with-parent --new-session \
//	        --cap-drop ALL --ro-bind /usr /usr (+ /bin, /lib, ... and an /etc subset) \
//	        --proc /proc --dev /dev --tmpfs /tmp --bind HOME /home/user \
//	        --ro-bind HOST PATH ... --remount-ro / --chdir /home/user --clearenv ... \
//	        -- /bin/sh -c 'printf . >&3; exec 3>&-; exec /bin/bash -c "$1"' ... COMMAND
//
// bwrap therefore runs unprivileged and relies on unprivileged user
// namespaces (kernel.unprivileged_userns_clone=1 on Debian kernels that have
// the knob, user.max_user_namespaces > 0). When the caller is not root it
// cannot change uid: bwrap runs as the caller, UID/GID are ignored, and
// unshare and setpriv are left out.
//
// The "." on fd 3 tells Run that bwrap's setup succeeded: a failure before
// it is an error (SetupError), after it the command's exit code. unshare
// gives bwrap's monitor a pid namespace of its own, so that the sandbox's
// pid 1, which the monitor does not wait for, is reaped at once rather than
// lazily by the host's init (zombies count against MaxProcs).
//
// Isolation: a fresh network namespace holding only lo; own pid, ipc, uts
// and cgroup namespaces; no nested user namespaces; no capabilities;
// everything read-only except /home/user and a private tmpfs /tmp (and
// /dev/shm) that vanish with the sandbox; the environment is exactly HOME,
// PATH, TZ, LANG (plus Options.Env). On timeout or cancellation the whole
// process tree is killed: the process group Run started gets SIGKILL, and
// with it the sandbox's pid namespace. Exit codes: a command killed by
// signal N inside reports 128+N; ExitCode is -1 only when Run killed it.
//
// Seccomp: every command runs under a classic BPF filter (seccomp.go,
// passed to bwrap on a pipe with --seccomp) that refuses what an agent's
// shell never needs: io_uring, keyrings (keyctl, add_key, request_key),
// bpf, perf_event_open, every mount and namespace call (mount, umount2,
// the new mount API, pivot_root, chroot, unshare, setns, clone with a
// namespace flag; clone3 gets ENOSYS so glibc falls back to clone),
// ptrace (whole: of its own children too), process_vm_readv/writev,
// pidfd_getfd, kcmp, kexec, modules, swap, reboot, userfaultfd,
// open_by_handle_at, name_to_handle_at, acct, quotactl, lookup_dcookie,
// fanotify_init, iopl/ioperm, syslog, the clock setters and dangerous
// personality flags, each with EPERM. A syscall of another architecture
// (i386's int 0x80) kills the process; x32 numbers get ENOSYS. The filter
// is written for x86_64: on another architecture Run refuses to run.
//
// Limits: RLIMIT_NPROC is counted per real uid across the whole host, so
// concurrent sandboxes sharing a UID share MaxProcs; give parallel worlds
// distinct UIDs. When the caller is not root the sandbox runs as the caller,
// whose own processes and threads would count against the limit, so no
// process limit applies unless MaxProcs is set. Memory and disk use are not
// limited (a 256 MiB /tmp aside).
//
// Because bwrap runs as the sandbox uid, it must be able to reach Home and
// every ReadOnly host path: each ancestor directory needs the search (x)
// bit for that uid. Run checks this and says which directory is missing it.
//
// # The sandbox host
//
// bwrap's new mount namespace is a copy of the one it starts in, made under
// a kernel lock that every mount and unmount takes too. In a process
// hosting hundreds of instances that namespace holds two mounts per
// instance, so each command copies (and then detaches) all of them, and
// resets wait behind it. With Options.Host the chain starts with
//
//	nsenter --mount=/proc/HOLDER/ns/mnt -- unshare --pid ... bwrap ...
//
// in the Host's namespace: a copy made once, when NewHost ran, with every
// mount made private except the Host's directory, a shared mount. Run binds
// the command's Home and ReadOnly paths below that directory (they
// propagate into the Host's namespace, and only there) and bwrap binds them
// from there; they are unmounted when the command ends. Everything else is
// as above: the same chain, limits, cgroups and isolation.
//
// # Setups at once
//
// A short command's cost is its setup: a chain of eight programs, new
// namespaces and cgroups, bwrap's ~35 mounts, all under the same kernel
// lock and on the same CPUs as the caller's own work. Options.Setups, a
// semaphore the callers share, caps how many run at once: a run holds its
// unit from before its mounts until bwrap's setup is done (the "." on the
// ready pipe) or the run ends, so a command that runs long never holds it.
// runtime.Manager shares one of GOMAXPROCS units among its instances.
//
// # Frozen time
//
// When Options.Clock is set, libfaketime (Debian package libfaketime) runs
// in every program: bwrap binds (--ro-bind-data) an /etc/ld.so.preload
// naming .../faketime/libfaketime.so.1 and an /etc/faketimerc holding
// "@YYYY-MM-DD hh:mm:ss" (the clock in UTC; TZ=UTC inside), and the
// environment carries the same FAKETIME and FAKETIME_DONT_RESET=1, so
// `date`, python's time and every dynamically linked program start at the
// world's instant and tick from there. The clock does not hang on the
// environment the command controls: `LD_PRELOAD= date`, `env -i date` and
// `unset FAKETIME; date` still show the world's time (without
// FAKETIME_DONT_RESET a new process starts again at the world's instant).
//
// What still reads the real time, by design of a preloaded library: a
// statically linked program (Go binaries), a raw system call
// (python3 ctypes syscall(SYS_clock_gettime) or the vDSO reached without
// libc), and libfaketime's own opt-outs in the environment
// (FAKETIME_SKIP_CMDS, FAKETIME_ONLY_CMDS, FAKETIME_START_AFTER_*). The
// frozen clock makes a world reproducible; it is not a boundary.
package sandbox
