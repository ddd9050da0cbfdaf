package git

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
)

// mayIgnore reports whether git could ignore any of paths (relative to
// the top): whether a source of ignore patterns that could reach one of
// them is there at all. A .gitignore in the top or a directory on a
// path's way, a pattern in the repository's info/exclude (git init's has
// comments only), a core.excludesFile set, or the default global ignore
// file present each say it could, and so does anything that cannot be
// read. When none does, no git check-ignore is needed: a task's
// checkpoint of the files it added started one, which cost as much as the
// rest of the checkpoint.
func (c *Checkpoints) mayIgnore(ctx context.Context, paths []string) bool {
	seen := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); ; d = path.Dir(d) {
			if d == "." {
				d = ""
			}
			if !seen[d] {
				seen[d] = true
				if _, err := os.Lstat(filepath.Join(c.repo.Top, filepath.FromSlash(d), ".gitignore")); !os.IsNotExist(err) {
					return true
				}
			}
			if d == "" {
				break
			}
		}
	}
	data, err := readAdmin(c.repo.common(), filepath.Join("info", "exclude"))
	if err != nil && !missing(err) || hasPattern(data) {
		return true
	}
	for range c.repo.configValues(ctx, "core.excludesfile") {
		return true
	}
	global := gitUserFile("ignore")
	if global == "" {
		return true
	}
	_, err = os.Lstat(global)
	return !os.IsNotExist(err)
}

// hasPattern reports whether an ignore file holds a pattern: a line that
// is neither blank nor a comment.
func hasPattern(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) > 0 && line[0] != '#' {
			return true
		}
	}
	return sc.Err() != nil
}
