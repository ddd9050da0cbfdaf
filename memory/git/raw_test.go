package git

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestRawTreeIsReadOnlyFromRalphsCommits: a person's commit whose message
// carries the trailer names no raw tree; restore would otherwise write
// whatever tree a message names.
func TestRawTreeIsReadOnlyFromRalphsCommits(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	tree := strings.TrimSpace(sh(t, dir, "git write-tree"))
	sh(t, dir, "git commit -q --allow-empty -m 'subject' -m '"+rawTrailer+tree+"'")
	r := open(t, dir)
	if got := r.rawTreeOf(context.Background(), strings.TrimSpace(sh(t, dir, "git rev-parse HEAD"))); got != "" {
		t.Fatalf("a person's commit named raw tree %q", got)
	}
}

// TestCheckpointsKeepARawTreeOnlyWhereGitConverts: a repository without
// attributes or autocrlf costs no raw tree and no git process to find
// that out; one with `* text=auto` keeps the CRLF file's bytes.
func TestCheckpointsKeepARawTreeOnlyWhereGitConverts(t *testing.T) {
	t.Parallel()
	for _, attrs := range []bool{false, true} {
		dir := repo(t)
		if attrs {
			write(t, filepath.Join(dir, ".gitattributes"), "* text=auto\n")
		}
		write(t, filepath.Join(dir, "win.txt"), "a\r\nb\r\n")
		cps := NewCheckpoints(open(t, dir), "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
		cp, err := cps.Record(context.Background(), "baseline", "ralph s1 baseline")
		if err != nil {
			t.Fatal(err)
		}
		raw := cps.repo.rawTreeOf(context.Background(), cp.Commit)
		if (raw != "") != attrs {
			t.Fatalf("attributes %v: raw tree %q", attrs, raw)
		}
		if attrs {
			if got := sh(t, dir, "git cat-file -p "+raw+":win.txt"); got != "a\r\nb\r\n" {
				t.Fatalf("the raw tree holds %q", got)
			}
		}
	}
}
