package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// --- helpers ---------------------------------------------------------

// nativeWithin runs nativeSubjects in a goroutine and fails the test after d.
func nativeWithin(t *testing.T, gitDir string, n int, d time.Duration) (string, bool) {
	t.Helper()
	type res struct {
		out []byte
		ok  bool
	}
	ch := make(chan res, 1)
	go func() {
		out, ok := nativeSubjects(gitDir, commonDir(gitDir), n)
		ch <- res{out, ok}
	}()
	select {
	case r := <-ch:
		return string(r.out), r.ok
	case <-time.After(d):
		t.Fatalf("nativeSubjects did not return within %v", d)
		return "", false
	}
}

// gitLog is what `git log -n --no-show-signature --format=%s` prints, and
// whether it succeeded.
func gitLog(t *testing.T, dir string, n int) (string, error) {
	t.Helper()
	cmd := exec.Command("git", "log", fmt.Sprintf("-%d", n), "--no-show-signature", "--format=%s")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), err
}

// rawCommit writes body as a loose commit object (no checks) and returns its name.
func rawCommit(t *testing.T, dir, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "body")
	write(t, f, body)
	return sh(t, dir, "git hash-object -t commit -w --literally "+f)[:40]
}

// looseFile writes an arbitrary zlib payload as the loose object name.
func looseFile(t *testing.T, dir, name string, zdata []byte) {
	t.Helper()
	p := filepath.Join(dir, ".git", "objects", name[:2], name[2:])
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.Remove(p)
	if err := os.WriteFile(p, zdata, 0o444); err != nil {
		t.Fatal(err)
	}
}

func zlibOf(raw []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(raw)
	w.Close()
	return b.Bytes()
}

func objName(body string) string {
	s := sha1.Sum([]byte(fmt.Sprintf("commit %d\x00%s", len(body), body)))
	return hex.EncodeToString(s[:])
}

type base struct{ dir, gitDir, tree, root string }

func newBase(t *testing.T) base {
	dir := repo(t)
	return base{dir, filepath.Join(dir, ".git"), sh(t, dir, "git rev-parse HEAD^{tree}")[:40], sh(t, dir, "git rev-parse HEAD")[:40]}
}

func (b base) hdr(parents ...string) string {
	s := "tree " + b.tree + "\n"
	for _, p := range parents {
		s += "parent " + p + "\n"
	}
	return s
}

// compare fails the test when the native reader says ok but differs from git
// (or git fails).
func compare(t *testing.T, b base, what string) {
	t.Helper()
	got, ok := nativeWithin(t, b.gitDir, 10, 10*time.Second)
	want, err := gitLog(t, b.dir, 10)
	switch {
	case !ok:
		t.Logf("%s: fell back to git (git: %q, %v)", what, want, err)
	case err != nil:
		t.Errorf("%s: native ok=true %q, but git log fails: %v", what, got, err)
	case got != want:
		t.Errorf("%s: native %q\n git %q", what, got, want)
	default:
		t.Logf("%s: same as git", what)
	}
}

const au = "author a <a@e> 1700000000 +0000\n"

func cm(date string) string { return "committer c <c@e> " + date + " +0000\n" }

// --- (e) subjects and order -----------------------------------------

func TestAttackSubjects(t *testing.T) {
	cases := []struct{ name, msg string }{
		{"crlf", "one\r\ntwo \r\n\r\nbody\r\n"},
		{"no blank after subject", "one\ntwo\nthree"},
		{"tabs and spaces", " \t\n\t lead\t \n  more  \n"},
		{"only blank", "\n \n\t\n"},
		{"lone cr lines", "\r\n\ra\r\n"},
		{"nel nbsp", "x\xc2\x85\n\xc2\xa0y\xc2\xa0\n"},
		{"nul in message", "sub\x00hidden\n"},
		{"invalid utf8", "caf\xe9 \xff\n"},
		{"ctrl", "a\x1b[31mred\x07\n"},
	}
	for _, c := range cases {
		b := newBase(t)
		h := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000001")+"\n"+c.msg)
		sh(t, b.dir, "git update-ref HEAD "+h)
		compare(t, b, c.name)
	}
	// A NUL in the header block: git's parse stops there.
	b := newBase(t)
	h := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000001")+"x-head a\x00b\n\nreal subject\n")
	sh(t, b.dir, "git update-ref HEAD "+h)
	compare(t, b, "nul in header")
}

func TestAttackOrder(t *testing.T) {
	t.Parallel()
	// merge M (newest) with parents X (odd header, date 900) and Y (normal, date 500).
	type oc struct{ name, xhead string }
	cases := []oc{
		{"no author line", cm("1700000900")},
		{"committer before author", cm("1700000900") + au},
		{"header between author and committer", au + "x-odd y\n" + cm("1700000900")},
		{"plus-signed date", au + cm("+1700000900")},
		{"two committer lines (first old)", au + cm("1") + cm("1700000900")},
		{"vertical tab before date", au + "committer c <c@e>\v1700000900 +0000\n"},
		{"nbsp before date", au + "committer c <c@e>\xc2\xa01700000900 +0000\n"},
		{"committerX prefix", au + "committerx c <c@e> 1700000900 +0000\n" + cm("1")},
		{"parent after author", "PARENTLATE"},
		{"gt in committer name", au + "committer c>d <c@e> 1700000900 +0000\n"},
	}
	for _, c := range cases {
		b := newBase(t)
		y := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000500")+"\nY\n")
		var x string
		if c.xhead == "PARENTLATE" {
			// X names its parent Z after the author line: git ignores it.
			z := rawCommit(t, b.dir, b.hdr(b.root)+au+cm("1700000950")+"\nZ (not X's parent for git)\n")
			x = rawCommit(t, b.dir, b.hdr()+au+cm("1700000900")+"parent "+z+"\n\nX\n")
		} else {
			x = rawCommit(t, b.dir, b.hdr(b.root)+strings.ReplaceAll(c.xhead, "\x00", "")+"\nX\n")
		}
		m := rawCommit(t, b.dir, b.hdr(x, y)+au+cm("1700001000")+"\nM\n")
		sh(t, b.dir, "git update-ref HEAD "+m)
		compare(t, b, c.name)
	}
	// No tree line / parent before tree: git calls the commit bogus.
	b := newBase(t)
	m := rawCommit(t, b.dir, "parent "+b.root+"\n"+au+cm("1700001000")+"\nno tree\n")
	write(t, filepath.Join(b.gitDir, "refs/heads/main"), m+"\n")
	compare(t, b, "no tree line")
}

// --- (e) the store: packs first, hashes, trailing garbage -------------

func TestAttackStore(t *testing.T) {
	t.Parallel()
	// A loose object shadowing a packed one is
	// TestNativeSubjectsTakeNoLooseCopyOfAPackedCommit's.
	// A loose tip whose content does not hash to its name.
	b := newBase(t)
	forged := b.hdr(b.root) + au + cm("1700000001") + "\nFORGED subject\n"
	name := strings.Repeat("ab", 20)
	looseFile(t, b.dir, name, zlibOf([]byte(fmt.Sprintf("commit %d\x00%s", len(forged), forged))))
	sh(t, b.dir, "git update-ref --no-deref HEAD "+name+" 2>/dev/null || printf '"+name+"\\n' > .git/refs/heads/main")
	compare(t, b, "hash mismatch at the tip")

	// Trailing garbage after the zlib stream.
	b = newBase(t)
	body := b.hdr(b.root) + au + cm("1700000001") + "\ngarbage after\n"
	name = objName(body)
	looseFile(t, b.dir, name, append(zlibOf([]byte(fmt.Sprintf("commit %d\x00%s", len(body), body))), "GARBAGE"...))
	write(t, filepath.Join(b.gitDir, "refs/heads/main"), name+"\n")
	compare(t, b, "garbage after the zlib stream")

	// The 10th commit's parent missing.
	b = newBase(t)
	sh(t, b.dir, "for i in $(seq 12); do git commit -q --allow-empty -m c$i; done")
	p := sh(t, b.dir, "git rev-parse HEAD~10")[:40]
	os.Remove(filepath.Join(b.gitDir, "objects", p[:2], p[2:]))
	compare(t, b, "10th commit's parent missing")
}

// --- (e) HEAD and refs spelled oddly ------------------------------------

func TestAttackRefs(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, head, ref string }{
		{"HEAD with leading newline", "\nHASH\n", ""},
		{"HEAD hash + nbsp", "HASH\xc2\xa0\n", ""},
		{"HEAD hash + vtab", "HASH\v", ""},
		{"ref with ..", "ref: refs/heads/x/../main\n", ""},
		{"ref with trailing /", "ref: refs/heads/main/\n", ""},
		{"ref with //", "ref: refs/heads//main\n", ""},
		{"ref to .lock", "ref: refs/heads/main.lock\n", "refs/heads/main.lock"},
		{"ref with space", "ref: refs/heads/a b\n", "refs/heads/a b"},
		{"ref out of refs/heads", "ref: refs/heads/../../ORIG_HEAD\n", "ORIG_HEAD"},
		{"loose ref with leading newline", "ref: refs/heads/main\n", "\n"},
		{"loose ref with nbsp", "ref: refs/heads/main\n", "nbsp"},
	}
	for _, c := range cases {
		b := newBase(t)
		sh(t, b.dir, "git commit -q --allow-empty -m second")
		h := sh(t, b.dir, "git rev-parse HEAD")[:40]
		switch c.ref {
		case "\n":
			write(t, filepath.Join(b.gitDir, "refs/heads/main"), "\n"+h+"\n")
		case "nbsp":
			write(t, filepath.Join(b.gitDir, "refs/heads/main"), "\xc2\xa0"+h+"\n")
		case "":
		default:
			write(t, filepath.Join(b.gitDir, c.ref), h+"\n")
		}
		write(t, filepath.Join(b.gitDir, "HEAD"), strings.ReplaceAll(c.head, "HASH", h))
		compare(t, b, c.name)
	}
}

// --- (a) hangs, (b) reads outside -----------------------------------------

// commondir naming another repository of the person's (unpinned).
func TestAttackCommondir(t *testing.T) {
	t.Parallel()
	other := newBase(t)
	sh(t, other.dir, "git commit -q --allow-empty -m 'SECRET other-repo subject'")
	b := newBase(t)
	write(t, filepath.Join(b.gitDir, "commondir"), other.gitDir+"\n")
	compare(t, b, "commondir -> another repository")
	got, _, err := Context(context.Background(), b.dir)
	t.Logf("Context: %v\n%s", err, got)
}

func measure(t *testing.T, what string, f func()) {
	t.Helper()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	f()
	runtime.ReadMemStats(&m1)
	t.Logf("%s: %v, %d MB allocated", what, time.Since(start), (m1.TotalAlloc-m0.TotalAlloc)>>20)
}

// TestSparseAdminFilesAreNotReadWhole: a sparse 1 GB file, which costs
// the model nothing, at .git/HEAD, a loose ref, commondir or the config is
// refused at its bound, not read whole: finding the repository, deciding
// the first look's guard and reading the subjects take well under a
// second and a few megabytes (they took 50 s and 11 GB at commondir).
// Not parallel: it counts the process's allocations, which tests running beside it would add to.
func TestSparseAdminFilesAreNotReadWhole(t *testing.T) {
	for _, f := range []string{"HEAD", "refs/heads/main", "commondir", "config"} {
		b := newBase(t)
		sh(t, b.dir, "truncate -s 1G .git/"+f)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if look := lookedRepo(b.dir); look != nil {
				configMayName(look.common, look.gitDir, "filter")
				nativeSubjects(look.gitDir, look.common, 10)
			}
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("a sparse .git/%s: the first look's reads did not end in 30 s", f)
		}
		runtime.ReadMemStats(&m1)
		if d, mb := time.Since(start), (m1.TotalAlloc-m0.TotalAlloc)>>20; d > 5*time.Second || mb > 64 {
			t.Errorf("a sparse 1 GB .git/%s: the first look's reads took %v and %d MB", f, d, mb)
		}
	}
}
