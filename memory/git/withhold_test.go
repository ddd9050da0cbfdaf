package git

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// refuseUnder is a door that refuses the files of dir named in names, and
// every file below dir/secrets.
type refuseUnder struct {
	dir   string
	names []string
}

func (d refuseUnder) Refuses(paths ...string) error {
	for _, p := range paths {
		rel, err := filepath.Rel(d.dir, p)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		for _, n := range d.names {
			if rel == n {
				return errors.New("refused: " + rel)
			}
		}
		if strings.HasPrefix(rel, "secrets/") {
			return errors.New("refused: " + rel)
		}
	}
	return nil
}

// No checkpoint takes in a file the door refuses, by any route: the
// baseline's status, a later status, the paths the tools named, and the
// raw tree (a tracked file git converts, whose bytes on disk a baseline
// hashes). The secret is in no object of the repository afterwards; the
// person's own commit of a refused file stays in the checkpoints as
// committed, and ordinary files are taken as before. Not parallel: open
// sets the environment.
func TestCheckpointsWithholdWhatTheDoorRefuses(t *testing.T) {
	dir := repo(t)
	write(t, filepath.Join(dir, ".gitattributes"), "* text=auto\n")
	write(t, filepath.Join(dir, "tracked.env"), "COMMITTED=the-persons-own\n")
	sh(t, dir, "git add .gitattributes tracked.env && git commit -qm tracked")
	const secret = "WITHHELD-SECRET-7f3a"
	write(t, filepath.Join(dir, ".env"), "TOKEN="+secret+"-env\n")
	write(t, filepath.Join(dir, "secrets", "vault.txt"), secret+"-vault\n")
	// A CRLF file in a text=auto repository needs the raw tree.
	write(t, filepath.Join(dir, "tracked.env"), "TOKEN="+secret+"-tracked\r\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	r := open(t, dir)
	cps := NewCheckpoints(r, "withhold", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.SetDoor(refuseUnder{dir: dir, names: []string{".env", "tracked.env"}})
	ctx := context.Background()
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil || base == nil {
		t.Fatalf("baseline: %+v, %v", base, err)
	}
	files := func(commit string) string { return sh(t, dir, "git ls-tree -r --name-only "+commit) }
	if got := "\n" + files(base.Commit); strings.Contains(got, "\n.env\n") || strings.Contains(got, "\nsecrets/") ||
		!strings.Contains(got, "\na.txt\n") || !strings.Contains(got, "\ntracked.env\n") {
		t.Errorf("the baseline's files:\n%s", got)
	}
	if got := sh(t, dir, "git show "+base.Commit+":tracked.env"); got != "COMMITTED=the-persons-own\n" {
		t.Errorf("tracked.env in the baseline = %q, want the person's commit", got)
	}

	// A later checkpoint, by the status and by the paths named.
	write(t, filepath.Join(dir, ".env"), "TOKEN="+secret+"-env-2\n")
	write(t, filepath.Join(dir, "secrets", "more.txt"), secret+"-more\n")
	if cp, err := cps.Record(ctx, "1", "only refused files changed"); err != nil || cp != nil {
		t.Fatalf("a change to refused files alone: %+v, %v", cp, err)
	}
	if cp, err := cps.Record(ctx, "2", "named", ".env", "secrets/more.txt"); err != nil || cp != nil {
		t.Fatalf("refused files the tools named: %+v, %v", cp, err)
	}
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	cp, err := cps.Record(ctx, "3", "turn")
	if err != nil || cp == nil {
		t.Fatalf("an ordinary change: %+v, %v", cp, err)
	}
	if len(cp.Files) != 1 || cp.Files[0].Path != "b.txt" {
		t.Errorf("files %+v, want b.txt alone", cp.Files)
	}
	if got := sh(t, dir, `git cat-file --batch-all-objects --batch-check='%(objectname)' | while read o; do git cat-file -p $o; done`); strings.Contains(got, secret) {
		t.Errorf("a refused file's content is in the repository's objects:\n%s", got)
	}
}
