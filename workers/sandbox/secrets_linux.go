package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// hideSecrets covers each secret path in the helper's private mount
// namespace: a directory with an empty read-only tmpfs, a file with
// /dev/null. The commands see an empty directory and an empty file; the
// person, and ralph, see nothing of it. A path that does not exist is
// skipped: the home directory is not the commands' to write. The path is
// opened without following symbolic links and mounted on through
// /proc/self/fd, as bindSelf does, so a link swapped in cannot redirect
// the mount; secretPaths lists a link's target as well.
func hideSecrets(paths []string) error {
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot open %s: %w", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fmt.Errorf("cannot inspect %s: %w", p, err)
		}
		self := "/proc/self/fd/" + strconv.Itoa(fd)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			err = nil // its target, listed too, is what gets covered
		case unix.S_IFDIR:
			err = unix.Mount("tmpfs", self, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
		default:
			err = unix.Mount("/dev/null", self, "", unix.MS_BIND, "")
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("cannot hide %s from commands: %w", p, err)
		}
	}
	return nil
}

// readRules are the Landlock rules that let commands read and execute
// everywhere but the secret paths. Landlock only grants, so without
// mounts (the sandbox without namespaces) the secrets are left out by
// granting on their surroundings instead of on /: every directory on the
// way down to a secret gets the right to be listed (so `ls ~` works) and
// each of its other entries the full read right, the secret none. The
// cost: an entry created in one of those directories after the helper
// started (a new file directly in the home directory) is not readable
// until the next helper. Symbolic links are not granted through (their
// targets are granted where they lie), or ~/key -> .ssh/id_rsa would
// grant the key.
func readRules(secrets []string) []landlock.Rule {
	if len(secrets) == 0 {
		return []landlock.Rule{landlock.RODirs("/")}
	}
	hidden := map[string]bool{}
	for _, s := range secrets {
		hidden[filepath.Clean(s)] = true
	}
	// Reading a directory's listing is granted on / and so everywhere:
	// the names in a secret directory are not its secrets.
	rules := []landlock.Rule{landlock.PathAccess(landlock.AccessFSSet(ll.AccessFSReadDir), "/")}
	var dirs, files []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return // unreadable: nothing in it is granted
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case hidden[p]:
			case e.Type()&os.ModeSymlink != 0:
			case e.IsDir() && aboveAny(p, hidden):
				walk(p)
			case e.IsDir():
				dirs = append(dirs, p)
			default:
				files = append(files, p)
			}
		}
	}
	walk("/")
	// Entries can vanish between the listing and the rule.
	if len(dirs) > 0 {
		rules = append(rules, landlock.RODirs(dirs...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...).IgnoreIfMissing())
	}
	return rules
}

// aboveAny reports whether dir lies above one of the hidden paths.
func aboveAny(dir string, hidden map[string]bool) bool {
	for h := range hidden {
		if within(dir, h) && h != dir {
			return true
		}
	}
	return false
}
