// Package world holds wildawm's domain types: content IDs, the world manifest,
// the on-disk layout of a world state, accounts, the produces declaration and
// the clock. It imports nothing else of the project; every other package may
// import it.
//
// Glossary:
//   - ID: a SHA-256 content identifier (blobs, trees, snapshots, world hashes).
//   - world state W(c,d): a directory laid out as Layout describes, holding one
//     persona's mutable state after day d.
//   - Manifest: who and when a world state is (persona, day, clock), its parent
//     snapshot and the catalog it references by hash.
//   - Produces: what a day's delta declares it writes; checked after apply.
//   - Clock: the only source of time the core may read.
//   - Walk: the one way to read a world directory that an agent has shaped:
//     by descriptors, never following a symlink, never opening a fifo or
//     device, at any depth; what it cannot take it lists in a SkipList.
//   - OpenHomeFile: the one way host code opens a file of a home an agent
//     has shaped (its tools, the verifier, the judges): by descriptors, no
//     symlink followed, O_NONBLOCK, a regular file of a bounded size or a
//     *HomeFileError saying why not in the agent's words.
//   - ErrAgentFault: wrapped by an error an agent caused in its own world
//     or answer; scored as the agent's failure, never as infrastructure.
package world
