package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// packsOf makes dir's objects into packs of the given counts of new
// blobs each, and returns the packs' names (pack-<hash>), in that order.
func packsOf(t *testing.T, dir string, counts []int) []string {
	t.Helper()
	var names []string
	for k, n := range counts {
		var script strings.Builder
		script.WriteString("{ ")
		for i := range n {
			fmt.Fprintf(&script, "echo blob-%d-%d | git hash-object -w --stdin; ", k, i)
		}
		script.WriteString("} | git pack-objects -q .git/objects/pack/pack")
		names = append(names, "pack-"+strings.TrimSpace(sh(t, dir, script.String())))
	}
	sh(t, dir, "git prune-packed")
	return names
}

// leftPacks lists the packs in dir's pack directory.
func leftPacks(t *testing.T, dir string) []string {
	t.Helper()
	idx, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range idx {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".idx"))
	}
	slices.Sort(names)
	return names
}

// TestGeometricSplitIsGits: the packs packByList rolls up are those git
// repack -d --geometric=2 rolls up, git itself the judge, for the cases
// of git's own tests of it (t7703) and a long run's: a progression kept,
// one broken at the bottom, in the middle, and one whose new pack would
// outgrow the next.
func TestGeometricSplitIsGits(t *testing.T) {
	t.Parallel()
	for _, counts := range [][]int{
		{1, 2, 4, 8},
		{1, 1, 1},
		{1, 1, 4},
		{3, 3, 4, 10},
		{2, 3, 10, 20},
		{1, 2, 5, 6, 30},
		{7, 100, 100},
		{1, 4, 5},
	} {
		t.Run(fmt.Sprint(counts), func(t *testing.T) {
			t.Parallel()
			dir := repo(t)
			// The repository's own commit, packed alone and kept, so the
			// packs are the case's.
			sh(t, dir, "git repack -adq && for p in .git/objects/pack/*.pack; do touch ${p%.pack}.keep; done")
			made := packsOf(t, dir, counts)
			packs, ok := localPacks(filepath.Join(dir, ".git"))
			if !ok || len(packs) != len(counts) {
				t.Fatalf("localPacks: %v %v", packs, ok)
			}
			var ours []string
			for _, p := range packs[geometricSplit(packs):] {
				ours = append(ours, p.name)
			}
			sh(t, dir, "git repack -d -q --geometric=2")
			var gits []string
			for _, p := range leftPacks(t, dir) {
				if slices.Contains(made, p) {
					gits = append(gits, p)
				}
			}
			slices.Sort(ours)
			if !slices.Equal(ours, gits) {
				t.Errorf("packs of %v kept: ours %v, git's %v", counts, ours, gits)
			}
		})
	}
}

// TestPackByListPacksAndRollsUp: the pack beside the checkpoints packs the
// loose objects and rolls up the packs that break the progression into
// one new pack, then removes what it packed; a kept pack is left, and the
// repository holds every object it held, whole.
func TestPackByListPacksAndRollsUp(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	made := packsOf(t, dir, []int{2, 3, 40})
	kept := packsOf(t, dir, []int{1})[0]
	write(t, filepath.Join(dir, ".git", "objects", "pack", kept+".keep"), "")
	sh(t, dir, "for i in 1 2 3 4 5; do echo loose-$i | git hash-object -w --stdin; done")
	before := sh(t, dir, "git cat-file --batch-check --batch-all-objects")
	cps := NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if cps.store == nil {
		t.Fatal("no native store for a plain repository")
	}
	ok, err := cps.packByList(context.Background(), filepath.Join(dir, ".git"), packSettings{})
	if !ok || err != nil {
		t.Fatalf("packByList: %v %v", ok, err)
	}
	left := leftPacks(t, dir)
	// 2 and 3 with 5 loose make 10, under half of 40: 40 stays.
	if len(left) != 3 || !slices.Contains(left, made[2]) || !slices.Contains(left, kept) || slices.Contains(left, made[0]) || slices.Contains(left, made[1]) {
		t.Fatalf("packs left %v; made %v, kept %s", left, made, kept)
	}
	if got := sh(t, dir, "git count-objects -v | sed -n 1p"); got != "count: 0\n" {
		t.Errorf("loose objects left: %s", got)
	}
	if after := sh(t, dir, "git cat-file --batch-check --batch-all-objects"); after != before {
		t.Errorf("objects before:\n%s\nafter:\n%s", before, after)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

// TestPackByListRemovesNothingWhenPackingFails: a loose object git cannot
// read fails pack-objects, and then no pack and no loose object is
// removed; packs too large to name (maxRolledNames) and a
// multi-pack-index, which names the packs a roll-up would remove, leave
// the pack to git repack.
func TestPackByListRemovesNothingWhenPackingFails(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	made := packsOf(t, dir, []int{2, 2})
	sh(t, dir, "echo good | git hash-object -w --stdin; echo bad | git hash-object -w --stdin")
	bad := strings.TrimSpace(sh(t, dir, "echo bad | git hash-object --stdin"))
	path := filepath.Join(dir, ".git", "objects", bad[:2], bad[2:])
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, path, "not zlib at all")
	cps := NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	ok, err := cps.packByList(context.Background(), filepath.Join(dir, ".git"), packSettings{})
	if !ok || err == nil {
		t.Fatalf("packByList over a broken object: %v %v", ok, err)
	}
	for _, p := range made {
		if !slices.Contains(leftPacks(t, dir), p) {
			t.Errorf("%s was removed after a failed pack", p)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the loose object was removed after a failed pack: %v", err)
	}

	// Indexes a command planted that claim a billion objects each
	// (sparse files of 40 GB would pass a look at their size): read,
	// they would take 20 GB.
	dir = repo(t)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	for _, name := range []string{"pack-" + strings.Repeat("1", 40), "pack-" + strings.Repeat("2", 40)} {
		head := make([]byte, idxHeader)
		copy(head, idxMagic)
		for i := 8; i < idxHeader; i += 4 {
			copy(head[i:], []byte{0x40, 0, 0, 0})
		}
		write(t, filepath.Join(packDir, name+".pack"), "")
		write(t, filepath.Join(packDir, name+".idx"), string(head))
	}
	cps = NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if ok, err := cps.packByList(context.Background(), filepath.Join(dir, ".git"), packSettings{}); ok || err != nil {
		t.Fatalf("packByList of packs claiming a billion objects: %v %v, want it left to repack", ok, err)
	}

	dir = repo(t)
	packsOf(t, dir, []int{2, 2})
	sh(t, dir, "git multi-pack-index write")
	cps = NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if ok, err := cps.packByList(context.Background(), filepath.Join(dir, ".git"), packSettings{}); ok || err != nil {
		t.Fatalf("packByList beside a multi-pack-index: %v %v, want it left to repack", ok, err)
	}
}

// TestNamesReaderGivesEachNameALine: pack-objects reads every name of
// every list, a line each, whatever the size of the reads.
func TestNamesReaderGivesEachNameALine(t *testing.T) {
	a := objectIDs(strings.Repeat("\x01", 40))
	b := objectIDs(strings.Repeat("\xab", 20))
	for _, size := range []int{1, 7, 41, 4096} {
		r := &namesReader{lists: []objectIDs{a, nil, b}}
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		want := strings.Repeat("01", 20) + "\n" + strings.Repeat("01", 20) + "\n" + strings.Repeat("ab", 20) + "\n"
		if string(got) != want {
			t.Errorf("reads of %d: %q", size, got)
		}
	}
}

// TestWritesGoOnBesidePackByList: ralph's own writes of checkpoint
// objects and refs go on while packByList packs and removes loose objects
// beside them, as in a long run: no write fails, every object written is
// there after, and git finds nothing wrong.
func TestWritesGoOnBesidePackByList(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	r := open(t, dir)
	s := nativeStore(r.GitDir)
	if s == nil {
		t.Fatal("no native store for a plain repository")
	}
	cps := NewCheckpoints(r, "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	common := filepath.Join(dir, ".git")
	stop := make(chan struct{})
	done := make(chan error, 1)
	packs := 0
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := cps.packByList(context.Background(), common, packSettings{}); err != nil {
				done <- err
				return
			}
			packs++
		}
	}()
	var commits []string
	for i := range 300 {
		blob, err := s.writeObject("blob", fmt.Appendf(nil, "content %d\n", i))
		if err == nil {
			var commit string
			commit, err = s.writeCommit(commitBody(strings.TrimSpace(sh(t, dir, "git rev-parse HEAD^{tree}")), r.Head, "checkpoint "+blob, time.Now()))
			commits = append(commits, commit)
			if err == nil {
				err = s.writeRef(fmt.Sprintf("refs/ralph/s/%d", i%7), commit)
			}
		}
		if err != nil {
			close(stop)
			<-done
			t.Fatalf("write %d: %v", i, err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("packByList: %v", err)
	}
	t.Logf("%d packs beside 300 checkpoints", packs)
	if got := sh(t, dir, "git cat-file --batch-check='%(objecttype)' <<'EOF'\n"+strings.Join(commits, "\n")+"\nEOF"); strings.Count(got, "commit") != len(commits) {
		t.Fatalf("commits missing after the packs:\n%s", got)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

// TestPackByListKeepsAPackItWroteAgain: rolled up alone with a pack whose
// objects it already holds, a pack comes out of pack-objects as itself,
// under its own name, and stays.
func TestPackByListKeepsAPackItWroteAgain(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, "git repack -adq && for p in .git/objects/pack/*.pack; do touch ${p%.pack}.keep; done")
	blobs := "for i in 1 2 3; do echo same-$i | git hash-object -w --stdin; done"
	whole := "pack-" + strings.TrimSpace(sh(t, dir, blobs+" | git pack-objects -q .git/objects/pack/pack"))
	sh(t, dir, blobs+" | head -2 | git pack-objects -q .git/objects/pack/pack && git prune-packed")
	cps := NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	if ok, err := cps.packByList(context.Background(), filepath.Join(dir, ".git"), packSettings{}); !ok || err != nil {
		t.Fatalf("packByList: %v %v", ok, err)
	}
	t.Logf("packs left: %v (the whole one %s)", leftPacks(t, dir), whole)
	names := "for i in 1 2 3; do echo same-$i | git hash-object --stdin; done"
	if got := sh(t, dir, names+" | git cat-file --batch-check='%(objecttype)'"); got != "blob\nblob\nblob\n" {
		t.Fatalf("objects after the roll-up:\n%s", got)
	}
	if got := sh(t, dir, "git fsck --full --strict --no-dangling 2>&1"); got != "" {
		t.Fatalf("git fsck:\n%s", got)
	}
}

// TestNoPackBesideAlternates: a repository that names other object
// directories (objects/info/alternates) keeps its objects loose, for the
// person's own gc: a pack removes every loose object an alternate also
// holds, and a command that can write the git directory can name one of
// its own there that holds other content under a person's object's name.
func TestNoPackBesideAlternates(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	sh(t, dir, "git config --unset gc.auto; echo precious | git hash-object -w --stdin")
	elsewhere := t.TempDir()
	write(t, filepath.Join(dir, ".git", "objects", "info", "alternates"), elsewhere+"\n")
	cps := NewCheckpoints(open(t, dir), "s", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	cps.packNow(context.Background(), true)
	if pid := cps.packing.pid(); pid != 0 {
		t.Fatalf("a pack (%d) ran beside alternates", pid)
	}
	if got := sh(t, dir, "git count-objects -v | sed -n 1p"); got == "count: 0\n" {
		t.Fatal("the loose objects were packed")
	}
}
