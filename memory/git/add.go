package git

import (
	"bytes"
	"context"
	"os"
	"strings"
)

// git add never runs in ralph without passing through here. For a
// gitlink that the index holds already (a submodule, or a nested
// repository added before), git add asks whether its work tree is dirty
// by starting `git status` inside it, and that git reads the nested
// repository's own configuration: its clean filters and other drivers,
// which safeConfig cannot name, run with the person's rights. The model
// can write that configuration. git add has no --ignore-submodules, so
// the nested repositories are kept from it and recorded with
// update-index, which takes a gitlink's HEAD without looking inside.

// addPaths brings paths (relative to the top) in the index (env's) up to
// the work tree with git add -A, extra being more of add's arguments,
// except nested repositories, which update-index records.
func (r *Repo) addPaths(ctx context.Context, env []string, paths []string, extra ...string) error {
	var plain, nested []string
	for _, p := range paths {
		if r.isNestedRepo(p) {
			nested = append(nested, p)
		} else {
			plain = append(plain, p)
		}
	}
	if len(plain) > 0 {
		args := append([]string{"add", "-A"}, extra...)
		args = append(args, "--pathspec-from-file=-", "--pathspec-file-nul")
		if _, err := runCmd(ctx, SlowTimeout, false, r.Top, append(env, "GIT_LITERAL_PATHSPECS=1"), nulList(plain), args...); err != nil {
			return err
		}
	}
	return r.updateGitlinks(ctx, env, nested)
}

// AddAll is `git add -A -- .` in the work tree at dir, safe from nested
// repositories (see addAll): for ralph-temporal's workers, which commit a
// task's work tree outside the sandbox.
func AddAll(ctx context.Context, dir string) error {
	r, err := revParse(ctx, dir)
	if err != nil {
		return err
	}
	return r.addAll(ctx, nil)
}

// addAll is `git add -A -- .` for the whole work tree, with the gitlinks
// the index holds left to update-index.
func (r *Repo) addAll(ctx context.Context, env []string) error {
	links, err := r.gitlinks(ctx, env)
	if err != nil {
		return err
	}
	args := []string{"add", "-A", "--", "."}
	for _, l := range links {
		args = append(args, ":(exclude,literal)"+l)
	}
	if _, err := r.GitSized(ctx, env, args...); err != nil {
		return err
	}
	return r.updateGitlinks(ctx, env, links)
}

// updateGitlinks records nested repositories' HEADs (or their removal).
func (r *Repo) updateGitlinks(ctx context.Context, env []string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var stdin bytes.Buffer
	for _, p := range paths {
		stdin.WriteString(strings.TrimSuffix(p, "/"))
		stdin.WriteByte(0)
	}
	_, err := runCmd(ctx, SlowTimeout, false, r.Top, env, stdin.Bytes(), "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

// isNestedRepo reports whether a path of the work tree is a repository of
// its own: a directory holding .git.
func (r *Repo) isNestedRepo(p string) bool {
	_, err := os.Lstat(r.Abs(strings.TrimSuffix(p, "/") + "/.git"))
	return err == nil
}

// gitlinks lists the gitlinks the index (env's) holds.
func (r *Repo) gitlinks(ctx context.Context, env []string) ([]string, error) {
	out, err := r.GitSized(ctx, env, "ls-files", "-z", "--stage")
	if err != nil {
		return nil, err
	}
	var links []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "160000 <object> <stage>\t<path>"
		if bytes.HasPrefix(rec, []byte("160000 ")) {
			if _, p, ok := bytes.Cut(rec, []byte{'\t'}); ok {
				links = append(links, string(p))
			}
		}
	}
	return links, nil
}
