package startup

import "os"

// Version is ralph's version, set at build time with
// -ldflags "-X github.com/ralph-dev/ralph/scripts/startup.Version=...".
var Version = "0.1.0-dev"

// VersionLine is what `ralph --version` alone prints; the command tree's
// version template (scripts/cli) prints the same line for --version beside
// other words, which TestVersionIsAnsweredBeforeThePackagesInitialise
// holds them to.
func VersionLine() string { return "ralph " + Version + "\n" }

func init() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		os.Exit(answerVersion())
	}
	prefault()
}

// answerVersion prints the version line and returns the exit code: 1,
// with the reason on standard error, when standard output takes no line,
// in the words every other command uses for it (scripts/cli's stdout.go).
func answerVersion() int {
	if _, err := os.Stdout.WriteString(VersionLine()); err != nil {
		_, _ = os.Stderr.WriteString("ralph: cannot write the output: " + err.Error() + "\n")
		return 1
	}
	return 0
}
