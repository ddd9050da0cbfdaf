package git

// What an attack on nativeSubjects found it read otherwise than git, or
// at a cost git's bound would not allow; each now reads as git does or
// leaves the commit to git. Helpers (newBase, rawCommit, looseFile,
// zlibOf, nativeWithin, gitLog, gittestEnv, au, cm) are in
// nativelog_attack_test.go.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"path/filepath"
	"testing"
	"time"
)

// sameAsGit fails when the native reader answers ok but not as git does.
func sameAsGit(t *testing.T, b base, what string) {
	t.Helper()
	got, ok := nativeWithin(t, b.gitDir, 10, 10*time.Second)
	want, err := gitLog(t, b.dir, 10)
	if ok && (err != nil || got != want) {
		t.Errorf("%s: native %q, git %q (err %v)", what, got, want, err)
	}
}

// A NUL in the message: git's %s stops at it; the reader kept it (a NUL
// byte in the system prompt), and now leaves such a commit to git.
func TestNativeSubjectsLeaveANulToGit(t *testing.T) {
	t.Parallel()
	b := newBase(t)
	h := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000001")+"\nsub\x00hidden\n")
	sh(t, b.dir, "git update-ref HEAD "+h)
	sameAsGit(t, b, "NUL in message")
}

// The walk's dates are git's: git takes the committer date only from the
// line right after an "author" line right after the parents
// (parse_commit_date), else 0; the reader took any committer line's, the
// last one, split on Unicode spaces. Any other layout goes to git now.
func TestNativeSubjectsDateCommitsAsGitDoes(t *testing.T) {
	t.Parallel()
	for name, xhead := range map[string]string{
		"no author line":             cm("1700000900"),
		"committer before author":    cm("1700000900") + au,
		"header in between":          au + "x-odd y\n" + cm("1700000900"),
		"two committer lines":        au + cm("1") + cm("1700000900"),
		"NBSP before the date":       au + "committer c <c@e>\xc2\xa01700000900 +0000\n",
		"committerx prefix":          au + "committerx c <c@e> 1700000900 +0000\n" + cm("1"),
		"'>' in the name (git<2.42)": au + "committer c>d <c@e> 1700000900 +0000\n",
	} {
		b := newBase(t)
		y := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000500")+"\nY\n")
		x := rawCommit(t, b.dir, b.hdr(b.root)+xhead+"\nX\n")
		m := rawCommit(t, b.dir, b.hdr(x, y)+au+cm("1700001000")+"\nM\n")
		sh(t, b.dir, "git update-ref HEAD "+m)
		sameAsGit(t, b, name)
	}
}

// A parent line after the author line: git reads parents only right after
// the tree line and ignores it; the reader walked it.
func TestNativeSubjectsWalkOnlyGitsParents(t *testing.T) {
	t.Parallel()
	b := newBase(t)
	z := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000950")+"\nZ, not X's parent for git\n")
	x := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000900")+"parent "+z+"\n\nX\n")
	sh(t, b.dir, "git update-ref HEAD "+x)
	sameAsGit(t, b, "parent after author")
}

// git looks in the packs before the loose objects: a loose object of
// another content at a packed commit's name was what the reader showed,
// where git shows the packed one. A commit's bytes must have its name.
func TestNativeSubjectsTakeNoLooseCopyOfAPackedCommit(t *testing.T) {
	t.Parallel()
	b := newBase(t)
	sh(t, b.dir, "git commit -q --allow-empty -m 'real tip' && git repack -q -a -d && git prune-packed")
	tip := sh(t, b.dir, "git rev-parse HEAD")[:40]
	forged := b.hdr() + au + cm("1700000001") + "\nFORGED subject\n"
	looseFile(t, b.dir, tip, zlibOf([]byte(fmt.Sprintf("commit %d\x00%s", len(forged), forged))))
	sameAsGit(t, b, "loose object shadowing a packed one")
}

// A sparse 1 GB .git/HEAD (free on disk) was read whole (maxAdminFile):
// 3 GB allocated and seconds in nativeSubjects alone.
// Not parallel: it bounds a read at a second, which tests running beside it would eat into.
func TestNativeSubjectsReadNoSparseHeadWhole(t *testing.T) {
	b := newBase(t)
	sh(t, b.dir, "truncate -s 1G .git/HEAD")
	start := time.Now()
	nativeWithin(t, b.gitDir, 10, 60*time.Second)
	if d := time.Since(start); d > time.Second {
		t.Errorf("nativeSubjects took %v on a sparse 1 GB HEAD", d)
	}
}

// The compressed size of a loose object was not bounded, only what it
// inflates to: empty deflate blocks cost input without output (5 s a GB,
// with no time limit, where the git it replaces has one).
func TestNativeSubjectsBoundTheCompressedFile(t *testing.T) {
	t.Parallel()
	b := newBase(t)
	body := b.hdr(b.root) + au + cm("1700000001") + "\nslow\n"
	raw := []byte(fmt.Sprintf("commit %d\x00%s", len(body), body))
	var z bytes.Buffer
	z.Write([]byte{0x78, 0x01})
	z.Write(bytes.Repeat([]byte{0, 0, 0, 0xff, 0xff}, 2<<20)) // 10 MB of empty stored blocks, ten times the bound
	z.WriteByte(1)
	binary.Write(&z, binary.LittleEndian, uint16(len(raw)))
	binary.Write(&z, binary.LittleEndian, ^uint16(len(raw)))
	z.Write(raw)
	binary.Write(&z, binary.BigEndian, adler32.Checksum(raw))
	name := objName(body)
	looseFile(t, b.dir, name, z.Bytes())
	write(t, filepath.Join(b.gitDir, "refs/heads/main"), name+"\n")
	start := time.Now()
	if _, ok := nativeWithin(t, b.gitDir, 10, 60*time.Second); ok {
		t.Errorf("a 200 MB loose commit was read here, in %v", time.Since(start))
	}
}

// Where git fails, the reader answered: a commit without a tree line,
// bytes after the zlib stream, HEAD or a ref spelled as git refuses.
func TestNativeSubjectsFailWhereGitFails(t *testing.T) {
	t.Parallel()
	b := newBase(t)
	m := rawCommit(t, b.dir, "parent "+b.root+"\n"+au+cm("1700001000")+"\nno tree\n")
	write(t, filepath.Join(b.gitDir, "refs/heads/main"), m+"\n")
	sameAsGit(t, b, "no tree line")

	b = newBase(t)
	body := b.hdr(b.root) + au + cm("1700000001") + "\ngarbage after\n"
	looseFile(t, b.dir, objName(body), append(zlibOf([]byte(fmt.Sprintf("commit %d\x00%s", len(body), body))), "GARBAGE"...))
	write(t, filepath.Join(b.gitDir, "refs/heads/main"), objName(body)+"\n")
	sameAsGit(t, b, "garbage after the zlib stream")

	for _, head := range []string{"\nHASH\n", "HASH\xc2\xa0\n", "ref: refs/heads/x/../main\n", "ref: refs/heads/main/\n", "ref: refs/heads//main\n"} {
		b = newBase(t)
		h := sh(t, b.dir, "git commit -q --allow-empty -m second && git rev-parse HEAD")[:40]
		write(t, filepath.Join(b.gitDir, "HEAD"), replaceHash(head, h))
		sameAsGit(t, b, fmt.Sprintf("HEAD %q", head))
	}
}

func replaceHash(s, h string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte("HASH"), []byte(h)))
}
