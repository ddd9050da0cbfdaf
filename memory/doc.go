// Package memory owns every byte ralph persists in a project and in the
// person's own directories. All of it goes through an afero.Fs (the door of
// memory/rootfs in ralph, an in-memory one in tests, which can inject
// failures), while crash tests use the real one. Its root holds:
//
//   - writing a file whole and safely (atomic.go, rename_*.go), knowing
//     ralph's own last write (ownwrites.go) and a full disk (diskfull*.go);
//   - sessions: their directory, state and schema (session*.go, state.go),
//     their logs (logs.go), the settings sealed with the person's key
//     (seal.go), a saved conversation made valid to send again (repair.go),
//     the model's todo list (todo.go);
//   - the project's lock (lock*.go) and the registry of projects and their
//     archives (registry*.go);
//   - the markdown state files in the project root (statefiles*.go) and
//     what a project is, from its marker files (detect.go);
//   - the plans the task loop works, through one seam (tracker.go): ralph's
//     task file (tasks*.go), ralph-tui's prd.json (prd*.go), ralphex plans
//     (ralphex.go), Beads (beadstracker.go), where plan files are kept
//     (plans.go) and a task's completion record (complete.go);
//   - the redaction of secret values from what is kept (redact.go).
//
// Each other concern of what persists has a package of its own beneath:
// memory/config, memory/conversation, memory/git, memory/rootfs and the
// rest (docs/architecture.md lists them).
package memory
