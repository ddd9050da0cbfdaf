package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// ReviewBase is what `ralph review` compares the work tree with when no
// range is given: where the current branch left the default branch (main
// or master, or origin's HEAD), or HEAD itself on the default branch.
func (r *Repo) ReviewBase(ctx context.Context) (string, error) {
	branch, _ := r.Branch(ctx)
	var defaults []string
	if out, err := r.Git(ctx, nil, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD"); err == nil {
		defaults = append(defaults, strings.TrimSpace(string(out)))
	}
	defaults = append(defaults, "main", "master")
	for _, d := range defaults {
		if d == "" || d == branch || r.Rev(ctx, d) == "" {
			continue
		}
		out, err := r.Git(ctx, nil, "merge-base", "HEAD", d)
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	if r.HeadNow(ctx) == "" {
		return "", fmt.Errorf("the repository has no commit to compare with")
	}
	return "HEAD", nil
}

// reviewLimit bounds the patch ReviewDiff returns: a review reads the
// head of it (and the files it names), so a change of 10,000 files or a
// 600 MB one costs no more than this.
const reviewLimit = 256 << 10

// reviewBigFile is the size from which a file's content is left out of
// the patch ("Binary files … differ", or a line naming a new file).
const reviewBigFile = 1 << 20

// ReviewDiff is the patch a review reads: of a range ("main..feature",
// "HEAD~3") as git diff gives it, or, for a single commit, from it to the
// work tree, with the files git does not track yet (and does not ignore)
// as new files. It is cut at reviewLimit, saying what it left out, and a
// file over reviewBigFile shows as changed without its content. Nothing
// is written: no index, no object.
func (r *Repo) ReviewDiff(ctx context.Context, rng string) (string, error) {
	args := []string{"-c", fmt.Sprintf("core.bigFileThreshold=%d", reviewBigFile),
		"diff", "--no-color", "--no-ext-diff", "--no-renames", rng, "--"}
	out, err := runCmd(ctx, scaled(0, 10000), false, r.Top, []string{"GIT_OPTIONAL_LOCKS=0"}, nil, args...)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if len(out) > reviewLimit {
		b.Write(out[:reviewLimit])
		fmt.Fprintf(&b, "\n… the patch goes on for %d more bytes (git diff %s)\n", len(out)-reviewLimit, rng)
		return b.String(), nil
	}
	b.Write(out)
	if strings.Contains(rng, "..") {
		return b.String(), nil
	}
	untracked, err := r.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return "", err
	}
	// New files are read through the work tree's door: a file a
	// command swapped for a link (to the person's key) or a pipe after
	// git listed it is not read.
	door, err := rootfs.New(r.Top)
	if err != nil {
		return "", err
	}
	defer door.Close()
	var left []string
	for _, p := range bytes.Split(untracked, []byte{0}) {
		name := string(p)
		switch {
		case name == "" || strings.HasPrefix(name, ".ralph/"):
		case b.Len() >= reviewLimit:
			left = append(left, name)
		default:
			newFilePatch(&b, door, r.Abs(name), name)
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "\n… and %d more new files: %s\n", len(left), strings.Join(clipList(left, 50), ", "))
	}
	return b.String(), nil
}

// newFilePatch writes the patch of an untracked file as git diff would
// show it new, without a git process per file: its lines, or that it is
// binary or too big to show.
func newFilePatch(b *bytes.Buffer, door *rootfs.Fs, abs, name string) {
	f, err := door.OpenRegular(abs)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	fmt.Fprintf(b, "diff --git a/%s b/%s\nnew file mode %o\n", name, name, 0o100644|fi.Mode().Perm()&0o111)
	if fi.Size() > reviewBigFile {
		fmt.Fprintf(b, "(a new file of %d bytes, too big to show)\n", fi.Size())
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, reviewBigFile))
	if err != nil {
		return
	}
	if bytes.IndexByte(data, 0) >= 0 {
		fmt.Fprintf(b, "Binary files /dev/null and b/%s differ\n", name)
		return
	}
	if len(data) == 0 {
		return
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	fmt.Fprintf(b, "--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", name, len(lines))
	for _, l := range lines {
		b.WriteString("+" + l)
	}
	if !strings.HasSuffix(lines[len(lines)-1], "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}

// clipList keeps the first n names, and says how many more there are.
func clipList(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(names[:n:n], fmt.Sprintf("(%d more)", len(names)-n))
}
