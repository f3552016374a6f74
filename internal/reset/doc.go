// Package reset materialises a world state into writable instance
// directories and resets them to the pristine state, fast. It imports
// internal/world (layout names) and nothing else of the project. It is not
// part of the deterministic core: bench.go reads the wall clock to measure.
//
// Glossary:
//   - lower: a world state checked out of the store once into a read-only
//     directory, shared by every instance of that snapshot; never modified.
//   - cache: the lowers under Materializer.CacheDir, bounded by MaxBytes
//     and collected least recently used first (cache.go): a lower is held
//     by an open instance, by the Scope of the ctx it was taken with, or,
//     outside one, until the Materializer's Close; CacheDir/.lock keeps
//     one process from collecting what another uses.
//   - Strategy: how instances are made from a lower (Name, New).
//   - Instance: a writable directory (Dir) whose content equals lower after
//     New and after every Reset; Close removes it.
//   - Writable / OpenWritable: the API for in-place writes; it breaks hard
//     links first (LinkBreaker) so a write never reaches lower.
//   - Strategies: "overlay" (overlayfs over lower, upper on a per-instance
//     tmpfs capped in bytes and inodes, both mounted nosuid,nodev), "hardlink" (hardlink farm; databases copied; Seal lower
//     first), "copy" (Go copy, copy_file_range, parallel), "cp" (cp -a, the
//     baseline), and the component "sqlite-deserialize" (in-memory SQLite
//     connections re-filled with sqlite3_deserialize; no directory).
//   - Bench / Report: round-robin timing of Reset after a small write.
//   - WriteFixture, Diff, HashTree: a synthetic world and tree comparison,
//     for tests and benchmarks.
//
// # Measured (2 vCPU VM, ext4 on virtio, loaded by other jobs)
//
// 16.1 MiB fixture (20 SQLite DBs ≈ 11 MiB, 60 home files incl. 8 binaries
// of 100 KiB–1 MiB), 300 resets per strategy, round-robin:
//
//	strategy            reset p50   p99       vs cp -a (p50)
//	cp (baseline)       36–64 ms    80–170 ms  1x
//	copy (2 workers)    25–43 ms    55–130 ms  1.5x
//	hardlink            13–28 ms    36–94 ms   2.3–2.9x
//	overlay             0.45–0.71 ms 1–30 ms   72–112x
//	sqlite-deserialize  2.1–3.3 ms  6–11 ms    12–19x (20 DBs, no files)
//
// Copying strategies are bound by writing the bytes (and the writeback they
// cause); hardlink still copies the 11 MiB of databases on every reset.
// Only overlay meets the targets (p50 <= 5 ms, >= 40x faster than cp -a):
// a reset is two mount(2) calls, one umount(2) and deleting the few files
// written into the tmpfs upper; its cost does not grow with the world.
// ResetClear and ResetRemount are within noise of each other (clear was
// faster in 3 of 4 runs); clear is the default.
//
// # Choice
//
// Use Overlay by default. When not root or overlayfs is missing, New fails
// with ErrUnavailable: fall back to Hardlink (lower Sealed, every in-place
// write through OpenWritable; see Hardlink for what is and is not
// protected), and to Copy when lower and the instance are on different file
// systems or writers cannot be trusted to use the API.
// SQLiteDeserialize is a component cost, not a directory strategy: ~3 ms for
// 11 MiB of databases, worth it only if services keep their databases in
// memory.
//
// The package is Linux only (copy_file_range, mount).
package reset
