package git

import (
	"context"
	"os"
	"path"
	"strings"
)

// linkCheck tells, for the paths of one checkpoint, which lie beyond a
// symbolic link: under a directory of the work tree that a command
// replaced with a link (mv d d.real && ln -s ~ d). Git refuses such a path
// whole ("beyond a symbolic link"), and what lies there is no file of the
// tree; the checkpoint records the link itself and the removal of the
// paths that were beneath it (forget). Each directory is looked at once.
type linkCheck struct {
	repo *Repo
	seen map[string]bool // directory (relative to the top): a link or beyond one
}

// beyond reports whether a path lies under a directory that is, or lies
// beyond, a symbolic link.
func (l *linkCheck) beyond(p string) bool {
	d := path.Dir(strings.TrimSuffix(p, "/"))
	if d == "." || d == "/" {
		return false
	}
	if v, ok := l.seen[d]; ok {
		return v
	}
	v := l.beyond(d)
	if !v {
		fi, err := os.Lstat(l.repo.Abs(d))
		v = err == nil && fi.Mode()&os.ModeSymlink != 0
	}
	l.seen[d] = v
	return v
}

// forget removes the paths beyond a symbolic link from ralph's index and
// returns the others, for update or add to take.
func (c *Checkpoints) forget(ctx context.Context, env []string, links *linkCheck, paths []string) ([]string, error) {
	var gone, rest []string
	for _, p := range paths {
		if links.beyond(p) {
			gone = append(gone, strings.TrimSuffix(p, "/"))
		} else {
			rest = append(rest, p)
		}
	}
	if len(gone) == 0 {
		return paths, nil
	}
	return rest, c.feed(ctx, env, nulList(gone), scaled(0, len(gone)), nil, c.writing("update-index", "--force-remove", "-z", "--stdin")...)
}
