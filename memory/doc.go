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
//   - what the plan formats (memory/planfile) keep here because sessions
//     keep it too: a state's task counts (taskcounts.go) and the progress
//     file's marks of a task's completion (progressmark.go);
//   - the redaction of secret values from what is kept (redact.go).
//
// Each other concern of what persists has a package of its own beneath:
// the plans the task loop works (memory/planfile), memory/config,
// memory/conversation, memory/git, memory/rootfs and the rest
// (docs/architecture.md lists them).
package memory
