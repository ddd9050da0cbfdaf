package sandbox

// Descriptors ralph inherits without close-on-exec would pass to every
// program it starts, and through the sandbox helper to every command:
// `ralph -y go 7>>~/.bashrc` let a command's `echo x >&7` append to the
// person's shell start-up file, and an inherited connected socket would
// reach whatever it is connected to past the Unix-socket rule. So ralph's
// main process marks every descriptor above stderr close-on-exec before
// it starts anything (SealInherited), and the helper does so again
// before its first command. Nothing ralph starts needs a descriptor ralph
// inherited: the programs it starts get their standard streams and the
// files it hands them itself (the helper's socket, a reaper's status
// pipe), which exec.Cmd and the helper pass explicitly. A make jobserver
// that started ralph does not reach the commands either; make's
// parallelism inside a sandboxed command is that command's own.
//
// The helper modes (`ralph __sandbox`, `ralph __sandbox __reap`) must not
// be sealed by main: they receive descriptor 3 on purpose, and mark it
// close-on-exec themselves once they hold it.

// SealInherited marks every descriptor from 3 up close-on-exec. Go opens
// all its own descriptors close-on-exec already, so only inherited ones
// change; none is closed, since the process may still use them itself.
func SealInherited() error { return sealInherited() }
