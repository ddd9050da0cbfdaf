package cli

import (
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// root is the project this invocation works on: the one -C names, or the
// one found from the working directory (projectroot.Find). It is found once,
// so every part of a command works on the same directory; and when the
// walk found it above the working directory, ralph says so on stderr
// before anything else, since that project's configuration and sessions
// are the ones used.
func (c *cli) root() (string, error) {
	if c.found != nil {
		return c.found.Root, nil
	}
	f, err := projectroot.Find(c.f.dir, c.f.allowHome)
	if err != nil {
		return "", err
	}
	if n := f.Note(); n != "" {
		fmt.Fprintln(os.Stderr, "ralph: "+text.StripControls(n))
	}
	c.found = &f
	return f.Root, nil
}

// door is the project named by -C or found from the working directory,
// and the project's door (memory/rootfs) on it; a project that cannot be
// found or opened is a usage error.
func (c *cli) door() (string, *rootfs.Fs, error) {
	root, err := c.root()
	if err != nil {
		return "", nil, usageErrorf("%s", err)
	}
	door, err := rootfs.New(root)
	if err != nil {
		return "", nil, usageErrorf("%s", err)
	}
	return root, door, nil
}
