package memory

import "path/filepath"

// StateGitignore is the .gitignore ralph keeps in .ralph/, which git
// opens at every status.
var StateGitignore = filepath.Join(StateDir, ".gitignore")

// WrittenStateFiles are the files under a project that ralph itself
// writes, relative to its root, beside each session's own files
// (SessionDir): a command can put a FIFO at any of them (the root is the
// model's; .ralph/ in the fallback sandbox), so every open of them goes
// through the project's door, which never waits and takes only a regular
// file (memory/rootfs's door.go). TestNoStateFileCallWaitsOnAFIFO plants
// a FIFO at each and fails if any of the package's calls waits on it; a
// new state file (a constant named …File of a project path) fails
// TestWrittenStateFilesAreListed until it is listed here.
func WrittenStateFiles() []string {
	return []string{InstructionsFile, AgentFile, GoalsFile, TasksFile, ProgressFile, TodoFile, LockFile, SessionFile, StateGitignore}
}
