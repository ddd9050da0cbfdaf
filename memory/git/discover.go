package git

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// discover finds what Open reports by reading the repository's files, as
// git's own discovery does, for the common case only: a work tree with a
// .git directory (or a .git file naming one, as a linked worktree has),
// owned by the person, with nothing in the environment or the
// repository's config that changes where git looks. Open is on the way to
// every session's first request, beside the git status that describes
// the tree; starting one git fewer there was worth a few milliseconds on
// a two-core machine. Anything else returns nil, and git's rev-parse
// decides.
func discover(dir string) *Repo {
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
		"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		if os.Getenv(v) != "" {
			return nil
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	start, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil
	}
	first, err := os.Stat(start)
	if err != nil || !first.IsDir() {
		return nil
	}
	for d := start; ; {
		if filepath.Base(d) == ".git" {
			return nil // inside a repository directory: git decides
		}
		if fi, err := os.Stat(d); err != nil || !sameDevice(d, fi, start, first) {
			return nil // git stops at a file system's boundary
		}
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil {
			return found(start, d, fi)
		}
		if !os.IsNotExist(err) {
			return nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// found describes the work tree whose top holds .git (fi), for dir.
func found(dir, top string, fi os.FileInfo) *Repo {
	gitDir := filepath.Join(top, ".git")
	switch {
	case fi.IsDir():
	case fi.Mode().IsRegular():
		b, err := readAdmin(top, ".git")
		if err != nil {
			return nil
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(top, target)
		}
		gitDir = filepath.Clean(target)
	default:
		return nil
	}
	common := commonDir(gitDir)
	// Git refuses a repository that someone else owns (safe.directory);
	// the person's config may allow it, and git knows.
	if !ownedByMe(top) || !ownedByMe(gitDir) || !plainConfig(common, "config") {
		return nil
	}
	if gitDir != common && !plainConfig(gitDir, "config.worktree") {
		return nil
	}
	head, ok := resolveHead(gitDir, common)
	if !ok {
		return nil
	}
	r := &Repo{Top: top, GitDir: gitDir, Head: head}
	if rel, err := filepath.Rel(top, dir); err == nil && rel != "." {
		r.Prefix = filepath.ToSlash(rel) + "/"
	}
	return r
}

// plainConfig reports whether a repository config file, name in dir
// (absent is fine), leaves discovery as it is: no core.worktree, no bare
// repository, no extensions (another object format or ref store) and no
// includes that could set any of those. A link or a pipe there is not
// plain: git decides.
func plainConfig(dir, name string) bool {
	data, err := readAdmin(dir, name)
	if missing(err) {
		return true
	}
	if err != nil {
		return false
	}
	// git skips a UTF-8 byte-order mark at the start of a config file.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.ToLower(strings.Join(strings.Fields(sc.Text()), ""))
		switch {
		case strings.HasPrefix(line, "[extensions"), strings.HasPrefix(line, "[include"),
			strings.HasPrefix(line, "worktree"):
			return false
		case strings.HasPrefix(line, "bare") && line != "bare=false" && line != "bare=no" && line != "bare=off" && line != "bare=0":
			return false
		}
	}
	return sc.Err() == nil
}

// resolveHead reads HEAD's commit: "" on a branch without commits; ok is
// false for what only git should resolve (a symbolic ref to a symbolic
// ref, a malformed file).
func resolveHead(gitDir, common string) (head string, ok bool) {
	b, err := readAdmin(gitDir, "HEAD")
	if err != nil {
		return "", false
	}
	content := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(content, "ref: ")
	if !symbolic {
		return content, isObjectName(content)
	}
	if !strings.HasPrefix(ref, "refs/heads/") {
		return "", false
	}
	if b, err := readAdmin(common, filepath.FromSlash(ref)); err == nil {
		oid := strings.TrimSpace(string(b))
		return oid, isObjectName(oid)
	} else if !missing(err) {
		return "", false
	}
	packed, err := readAdmin(common, "packed-refs")
	if missing(err) {
		return "", true // a branch without commits
	}
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if oid, name, ok := strings.Cut(line, " "); ok && name == ref {
			return oid, isObjectName(oid)
		}
	}
	return "", true
}

// isObjectName reports whether s is a full SHA-1 or SHA-256 name.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
