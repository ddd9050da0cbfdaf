package sandbox

// Outcome is what the sandbox has to add to a finished command's result.
type Outcome struct {
	// Err is set when the command's end is unknown: its helper died or
	// stopped answering.
	Err error
	// Removed lists guarded paths (such as .git/commondir) that the
	// command created and that were removed again, relative to the root.
	Removed []string
	// Undone lists the program keys the command set in the configuration
	// of a repository in the project (its own, nested ones, submodules,
	// linked worktrees, and the files they include), which were taken
	// back; a File that names a .git or commondir renamed aside says so.
	Undone []Undone
	// Restored lists the protected paths the command changed, created or
	// removed and that were put back (the Landlock-only sandbox).
	Restored []string
}
