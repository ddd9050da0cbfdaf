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

// replaceFile writes data over path by renaming a new file into place,
// so that the file is never seen half written, keeping its mode. A link
// or a device there is replaced, not written through.
func replaceFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	tmp := path + ".ralph-undo"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("putting back %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("putting back %s: %w", path, err)
	}
	return nil
}
