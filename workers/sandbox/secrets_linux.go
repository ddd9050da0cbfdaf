package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// readRules are the Landlock rules that let commands read and execute
// everywhere but the secret paths. Landlock only grants, so the secrets
// are left out by granting on their surroundings instead of on /: every directory on the
// way down to a secret gets the right to be listed (so `ls ~` works) and
// each of its other entries the full read right, the secret none. The
// cost: an entry created in one of those directories after the helper
// started (a new file directly in the home directory) is not readable
// until the next helper. Symbolic links are not granted through (their
// targets are granted where they lie), or ~/key -> .ssh/id_rsa would
// grant the key. The same rules serve the sandbox with namespaces and
// the one without: mounting over each secret would cost the helper's
// start a mount apiece, which on a busy machine took up to a few hundred
// milliseconds.
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
	dirs, files := around("/", hidden, nil)
	// Entries can vanish between the listing and the rule.
	if len(dirs) > 0 {
		rules = append(rules, landlock.RODirs(dirs...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...).IgnoreIfMissing())
	}
	return rules
}

// around lists what to grant under dir so that the hidden paths are
// left out: the directories and files beside each hidden path and beside
// each directory on the way down to one. Symbolic links are never
// listed, so a grant never reaches through one; an unreadable directory
// grants nothing in it. readRules and writeRules both grant this way;
// an entry skip reports is passed over too (nil: none).
func around(dir string, hidden map[string]bool, skip func(string) bool) (dirs, files []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case hidden[p]:
		case skip != nil && skip(p):
		case e.Type()&os.ModeSymlink != 0:
		case e.IsDir() && aboveAny(p, hidden):
			d, f := around(p, hidden, skip)
			dirs, files = append(dirs, d...), append(files, f...)
		case e.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
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

// writeRules are the Landlock rules that let commands write in the
// directories write, but not in the kept paths that lie in one of them
// (Policy.Keep: a home directory the person granted as the project still
// keeps its keys and ralph's own configuration). A write directory
// without a kept path in it is granted whole, as always; one with a kept
// path is granted around it, as readRules grants reading: each other
// entry of the directories on the way down is granted, those directories
// themselves only listed. So nothing can be created directly in such a
// directory (a new file in the home directory), and nothing in it can be
// renamed or removed, which would move a kept path. A write directory
// inside a kept path is not granted at all. refer grants moving files
// between the directories granted whole (Landlock ABI 2 and later).
//
// The walk passes over every session's private temporary directory
// (PrivateTempPrefix): a temporary directory granted around a home in it
// holds the other sessions' too, and this session's own is granted whole
// by its full name among write. The name is judged from the listing the
// grant is made from, so a directory made after it is not granted either.
func writeRules(write, kept []string, refer bool) []landlock.Rule {
	hidden := map[string]bool{}
	for _, k := range kept {
		hidden[filepath.Clean(k)] = true
	}
	var whole, dirs, files []string
	for _, w := range write {
		switch {
		case insideAny(w, hidden):
		case aboveAny(w, hidden):
			d, f := around(w, hidden, privateTemp)
			dirs, files = append(dirs, d...), append(files, f...)
		default:
			whole = append(whole, w)
		}
	}
	var rules []landlock.Rule
	for _, set := range []struct {
		dirs    []string
		missing bool
	}{{whole, false}, {dirs, true}} {
		if len(set.dirs) == 0 {
			continue
		}
		rw := landlock.RWDirs(set.dirs...)
		if refer {
			rw = rw.WithRefer()
		}
		if set.missing {
			rw = rw.IgnoreIfMissing()
		}
		rules = append(rules, rw)
	}
	if len(files) > 0 {
		rules = append(rules, landlock.RWFiles(files...).IgnoreIfMissing())
	}
	return rules
}

// privateTemp reports an entry named as a session's private temporary
// directory.
func privateTemp(p string) bool { return strings.HasPrefix(filepath.Base(p), PrivateTempPrefix) }

// insideAny reports whether dir is one of the hidden paths or lies in
// one.
func insideAny(dir string, hidden map[string]bool) bool {
	for h := range hidden {
		if within(h, dir) {
			return true
		}
	}
	return false
}
