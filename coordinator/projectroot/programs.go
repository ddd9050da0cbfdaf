package projectroot

import (
	"errors"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// claimRoot records root as a directory the model writes, so that no
// program ralph starts for itself is found in it and none gets it on a
// search path (childenv.AddRoots), and refuses the project when git, which
// every checkpoint runs as the person, is on PATH only inside it: an
// activated virtualenv's .venv/bin/git there is a file the model may have
// written. It is a bad-input error (exit 2), in one sentence.
func claimRoot(root string) error {
	childenv.AddRoots(root)
	_, err := childenv.Program("git")
	var ip *childenv.InProjectError
	if errors.As(err, &ip) {
		return badDir(nil, "git is on PATH only inside the project (%s), where the model may write it, so ralph runs no git there; "+
			"put the git you installed on PATH before the project's directories", ip.Path)
	}
	return nil
}
