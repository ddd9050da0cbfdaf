package sandbox

import "os"

// Command is what a Runner starts, the same on every platform: what
// differs is how each platform's Runner confines it.
type Command struct {
	Path string   // the program, as exec.Cmd.Path
	Args []string // argv, Args[0] included
	Dir  string
	Env  []string
	// Stdin, Stdout and Stderr are passed to the command as they are;
	// a nil Stdin is /dev/null.
	Stdin, Stdout, Stderr *os.File
	// LivesAcrossCommands marks a program that runs beside the model's
	// commands rather than as one of them (a project's MCP server): the
	// Landlock-only fallback, which puts protected paths back only after
	// each command, refuses to start it (ErrLivesAcrossCommands).
	LivesAcrossCommands bool
}
