// Package store keeps world-state directories as deduplicated,
// content-addressed snapshots, in the spirit of restic and git. It imports
// only the standard library, golang.org/x/sys and internal/world, and never
// reads the wall clock: the same input always yields the same bytes and IDs.
//
// Glossary:
//   - blob: a piece of content stored once, named by its ID (SHA-256).
//     A data blob is a chunk of a file; a tree blob is a directory.
//   - chunk: a piece of a file as Chunks cuts it. A SQLite database (first
//     16 bytes "SQLite format 3\x00") is cut at its page size, so one
//     changed page costs one page. Other files are cut by a gear rolling
//     hash (FastCDC style, fixed table): 2 KiB..64 KiB, about 8 KiB.
//   - tree: one directory as canonical JSON, {"entries":[...]} sorted by
//     name; each entry has name, type ("file", "dir", "symlink"), mode
//     (permission bits only), size, and chunks (files), subtree (dirs) or
//     target (symlinks). No times, no owners. The directory is read with
//     world.Walk (no symlink followed, nothing but files and directories
//     opened); what it leaves out (fifos, sockets, devices, entries past its
//     limits) is listed in the record's Skipped, never an error. Names and
//     targets are kept as their exact bytes: one that is not UTF-8 is
//     quoted in name (target) and exact, base64, in name_base64
//     (target_base64), world.SplitName's encoding.
//   - check: every object read and re-hashed, every tree walked, then every
//     snapshot restored to scratch and (CheckWith with a HashFunc) hashed
//     against its record's world hash.
//   - pack: blobs concatenated, uncompressed, up to about 16 MiB.
//   - index file: the blobs of one pack: {"pack":ID,"blobs":[{"id","type",
//     "offset","length"}]}.
//   - snapshot record: {"version":1,"kind","tree","parent","world_hash",
//     "persona","day","catalog"} and "skipped" when anything was (Snapshot). Its ID is the hash of these
//     bytes; the zero ID is written as "".
//   - garbage: files no snapshot needs (a crash's leftovers, forgotten
//     snapshots' blobs). Check lists it apart from errors; GC removes it.
//
// On disk, every file but config.json and lock is named by the SHA-256 of
// its own bytes, and every read re-hashes (errors wrap world.ErrIDMismatch):
//
//	STORE/
//	  config.json        {"version":1}
//	  lock               flock: Snapshot, Checkout, Check, Forget shared; GC exclusive
//	  packs/<id>         pack files
//	  index/<id>         index files
//	  snapshots/<id>     snapshot records
//	  tmp/               files being written
//
// Writes go to tmp/, are fsynced, renamed into place and the directory is
// fsynced. A Snapshot writes its packs, then their index files, then the
// record, so a crash at any point leaves only garbage. GC, holding the lock
// exclusively, deletes an index file before its pack, so a crash leaves at
// worst an unindexed pack (garbage), never an index without its pack.
//
// Backend is the narrow file interface (a local directory or memory);
// TestBackend is the suite every implementation must pass.
package store
