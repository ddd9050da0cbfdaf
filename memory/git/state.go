package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

// WorkState is a fingerprint of the work tree: HEAD, and every path
// `git status` lists (untracked files included, ignored ones not) with its
// size and modification time. Two equal fingerprints mean that nothing git
// sees changed in between, even in a file that was modified already: a
// task that claims to have written something can be checked against it.
// exclude are paths relative to the top left out (ralph's own state). It
// writes nothing, not even the index's stat cache.
func (r *Repo) WorkState(ctx context.Context, exclude ...string) (string, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all", "--", "."}
	for _, x := range exclude {
		args = append(args, ":(exclude,literal)"+x)
	}
	out, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
	if err != nil {
		return "", fmt.Errorf("work state: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "HEAD %s\n", r.HeadNow(ctx))
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 4 {
			continue
		}
		fmt.Fprintf(h, "%s", rec)
		if fi, err := os.Lstat(r.Abs(string(rec[3:]))); err == nil {
			fmt.Fprintf(h, " %d %d %v", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
