package cli

import (
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/text"
)

// root is the project this invocation works on: the one -C names, or the
// one found from the working directory (project.Find). It is found once,
// so every part of a command works on the same directory; and when the
// walk found it above the working directory, ralph says so on stderr
// before anything else, since that project's configuration and sessions
// are the ones used.
func (c *cli) root() (string, error) {
	if c.found != nil {
		return c.found.Root, nil
	}
	f, err := project.Find(c.f.dir)
	if err != nil {
		return "", err
	}
	if n := f.Note(); n != "" {
		fmt.Fprintln(os.Stderr, "ralph: "+text.StripControls(n))
	}
	c.found = &f
	return f.Root, nil
}
