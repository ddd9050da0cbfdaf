package sandbox

import (
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// aside is name, or name with a number added when name is taken.
func aside(name string) string {
	for n, try := 2, name; ; n++ {
		if _, err := os.Lstat(try); err != nil {
			return try
		}
		try = fmt.Sprintf("%s-%d", name, n)
	}
}

// renameAside renames target, in the project at root, to
// target.ralph-untrusted (or -2, -3, …), kept, not deleted, and returns
// the new name. The rename goes through the project's door: a directory
// on the way that a command swapped for a link is not followed.
func renameAside(root, target string) (string, error) {
	door, err := rootfs.New(root)
	if err != nil {
		return "", err
	}
	defer door.Close()
	aside := target + ".ralph-untrusted"
	for n := 2; ; n++ {
		if _, err := os.Lstat(aside); err != nil {
			break
		}
		aside = fmt.Sprintf("%s.ralph-untrusted-%d", target, n)
	}
	return aside, door.Rename(target, aside)
}
