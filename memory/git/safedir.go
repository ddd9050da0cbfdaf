package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// SafeDirectory reports whether git's safe.directory, as the person set
// it, lets git work in dir although another user owns it. Git reads that
// key only from the system, global and command-line configuration, never
// from a repository's own (which the owner of the repository writes), and
// so does this: git is asked from the file system's root, and what a
// repository there says is left out by its scope. ralph gives the same
// answer for any project directory someone else owns, in git or not.
func SafeDirectory(ctx context.Context, dir string) bool {
	out, err := run(ctx, string(filepath.Separator), nil, nil, "config", "--show-scope", "--get-all", "safe.directory")
	if err != nil {
		return false // none set, or no git: nothing allows it
	}
	return safeListed(string(out), dir, os.Getenv("HOME"))
}

// safeListed reads git config --show-scope output of safe.directory as git
// does: an empty value empties the list so far, "*" allows every
// directory, a value ending in "/*" every directory below it, any other
// value that directory alone ("~/" is the home directory).
func safeListed(out, dir, home string) bool {
	dir = filepath.Clean(dir)
	ok := false
	for _, line := range strings.Split(out, "\n") {
		scope, v, found := strings.Cut(line, "\t")
		if !found || scope == "local" || scope == "worktree" {
			continue
		}
		if rest, cut := strings.CutPrefix(v, "~/"); cut && home != "" {
			v = filepath.Join(home, rest)
		}
		switch {
		case v == "":
			ok = false
		case v == "*":
			ok = true
		case strings.HasSuffix(v, "/*"):
			prefix := filepath.Clean(strings.TrimSuffix(v, "*"))
			ok = ok || dir == prefix || strings.HasPrefix(dir, prefix+string(filepath.Separator))
		default:
			ok = ok || filepath.Clean(v) == dir
		}
	}
	return ok
}
