//go:build unix

package projectroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory"
)

// testRules judge as Find does, with base's parent as the one fixed stop,
// the test's own uid as the person's and others as the owners of the
// directories named: ownership by another user is tested without root.
func testRules(t *testing.T, base string, others ...string) rules {
	t.Helper()
	var infos []os.FileInfo
	for _, d := range others {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, fi)
	}
	return rules{uid: os.Geteuid(), sudo: -1, stops: map[string]bool{filepath.Dir(base): true},
		safe: func(string) bool { return false },
		owner: func(fi os.FileInfo) int {
			for _, o := range infos {
				if os.SameFile(fi, o) {
					return 65534
				}
			}
			return ownerOf(fi)
		}}
}

func testBase(t *testing.T) string {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return base
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRootFinding(t *testing.T) {
	base := testBase(t)
	r := testRules(t, base)
	proj := filepath.Join(base, "proj")
	deep := filepath.Join(proj, "a", "b")
	mkdirs(t, deep)
	if got := r.walk(deep); got != (Found{Root: deep}) {
		t.Fatalf("no markers: %+v, want the working directory", got)
	}
	mkdirs(t, filepath.Join(proj, ".git"))
	if got := r.walk(deep); got.Root != proj || got.Note() != "project is "+proj+" (the top of its git work tree)" {
		t.Fatalf("git top level: %+v (%q), want %s", got, got.Note(), proj)
	}
	if got := r.walk(proj); got != (Found{Root: proj}) {
		t.Fatalf("the working directory is the top: %+v, want no note", got)
	}
	mkdirs(t, filepath.Join(proj, "a", memory.StateDir))
	if got := r.walk(deep); got.Root != filepath.Join(proj, "a") || !strings.Contains(got.Note(), "found .ralph/ there") {
		t.Fatalf(".ralph/ nearer than the git top: %+v", got)
	}
	// A .ralph/ above a fixed stop is never reached.
	mkdirs(t, filepath.Join(base, memory.StateDir))
	other := filepath.Join(base, "other")
	mkdirs(t, other)
	r.stops[base] = true
	if got := r.walk(other); got.Root != other {
		t.Fatalf("walked into a boundary: %+v", got)
	}
	if _, err := Root(filepath.Join(base, "missing"), false); err == nil {
		t.Fatal("-C of a missing directory is not an error")
	}
}

// The usual temporary directories stop the walk even when $TMPDIR points
// elsewhere, and $TMPDIR's does too.
func TestBoundariesNameEveryTempDir(t *testing.T) {
	elsewhere := testBase(t)
	t.Setenv("TMPDIR", elsewhere)
	b := boundaries()
	for _, d := range []string{"/", "/tmp", "/var/tmp", "/dev/shm", elsewhere} {
		if !b[d] {
			t.Errorf("%s is not a boundary: %v", d, b)
		}
	}
}

// A directory every user may write, or another user owns, is never
// entered on the way up: its .ralph/ (which the model's commands, or
// another user, could have made) is not this project's.
func TestWalkStopsAtDirectoriesOthersMayWrite(t *testing.T) {
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		other bool
	}{
		{"sticky", 0o777 | os.ModeSticky, false},
		{"world-writable", 0o777, false},
		{"another user's", 0o755, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := testBase(t)
			up := filepath.Join(base, "up")
			sub := filepath.Join(up, "sub")
			mkdirs(t, sub, filepath.Join(up, memory.StateDir))
			if err := os.Chmod(up, c.mode); err != nil {
				t.Fatal(err)
			}
			var r rules
			if c.other {
				r = testRules(t, base, up)
			} else {
				r = testRules(t, base)
			}
			got := r.walk(sub)
			if got != (Found{Root: sub}) {
				t.Fatalf("walked into %s: %+v", up, got)
			}
			if err := r.check(sub, false); err != nil {
				t.Fatalf("the person's own directory below it: %v", err)
			}
			// As the project itself, a world-writable directory of the
			// person's (as a file system that shows every file so has)
			// is theirs to choose; its .ralph/ is theirs.
			err := r.check(up, false)
			if c.name == "world-writable" {
				if err != nil {
					t.Fatalf("the person's world-writable directory as the project: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNotYours) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s itself as the project: %v", up, err)
			}
		})
	}
}

// A project directory must be the person's own: not the root, not one
// every user may write, not another user's unless git's safe.directory
// names it, and its .ralph/ must be the person's too.
func TestProjectDirectoryMustBeYours(t *testing.T) {
	base := testBase(t)
	r := testRules(t, base)
	if err := r.check("/", true); !errors.Is(err, ErrNotYours) || !strings.Contains(err.Error(), "no project in /") {
		t.Fatalf("/: %v", err)
	}
	tmpish := filepath.Join(base, "tmpish")
	mkdirs(t, tmpish)
	if err := os.Chmod(tmpish, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	err := r.check(tmpish, false)
	if !errors.Is(err, ErrNotYours) || !strings.Contains(err.Error(), "mkdir "+filepath.Join(tmpish, "work")) ||
		!strings.Contains(err.Error(), "-C") {
		t.Fatalf("a sticky working directory: %v", err)
	}
	if err := r.check(tmpish, true); !errors.Is(err, ErrNotYours) || strings.Contains(err.Error(), "-C") {
		t.Fatalf("a sticky directory named with -C: %v", err)
	}

	theirs := filepath.Join(base, "theirs")
	mkdirs(t, theirs)
	r = testRules(t, base, theirs)
	if err := r.check(theirs, false); !errors.Is(err, ErrNotYours) || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("another user's directory: %v", err)
	}
	r.safe = func(dir string) bool { return dir == theirs }
	if err := r.check(theirs, false); err != nil {
		t.Fatalf("another user's directory that safe.directory names: %v", err)
	}
	// Its .ralph/ is its owner's too.
	mkdirs(t, filepath.Join(theirs, memory.StateDir))
	r = testRules(t, base, theirs, filepath.Join(theirs, memory.StateDir))
	r.safe = func(dir string) bool { return dir == theirs }
	if err := r.check(theirs, false); err != nil {
		t.Fatalf("the .ralph/ of another user's directory that safe.directory names: %v", err)
	}

	// Root under sudo works in the invoking user's directories, as git does.
	r = testRules(t, base, theirs)
	r.sudo = 65534
	if err := r.check(theirs, false); err != nil {
		t.Fatalf("the sudo user's own directory: %v", err)
	}

	mine := filepath.Join(base, "mine")
	state := filepath.Join(mine, memory.StateDir)
	mkdirs(t, state)
	r = testRules(t, base, state)
	if err := r.check(mine, false); !errors.Is(err, ErrNotYours) || !strings.Contains(err.Error(), state+" belongs to uid 65534") {
		t.Fatalf("a .ralph/ another user made: %v", err)
	}
	r = testRules(t, base)
	if err := r.check(mine, false); err != nil {
		t.Fatalf("the person's own project: %v", err)
	}
}

// Find from the working directory: the walk, then the check of what it
// found.
func TestFindFromTheWorkingDirectory(t *testing.T) {
	base := testBase(t)
	tmpish := filepath.Join(base, "tmpish")
	sub := filepath.Join(tmpish, "sub")
	mkdirs(t, sub, filepath.Join(tmpish, memory.StateDir))
	if err := os.Chmod(tmpish, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	r := testRules(t, base)
	t.Chdir(sub)
	f, err := r.find("")
	if err != nil || f != (Found{Root: sub}) {
		t.Fatalf("below a sticky directory: %+v, %v", f, err)
	}
	t.Chdir(tmpish)
	if _, err := r.find(""); !errors.Is(err, ErrNotYours) {
		t.Fatalf("in the sticky directory itself: %v", err)
	}
	f, err = r.find(sub)
	if err != nil || f != (Found{Root: sub}) {
		t.Fatalf("-C: %+v, %v", f, err)
	}
}

// TestNestedStateDirNotListed: a .ralph/ in pkg/ of a project the
// registry lists is the project only when the registry lists pkg too;
// otherwise the walk goes on to the enclosing project and says why.
func TestNestedStateDirNotListed(t *testing.T) {
	base := testBase(t)
	proj := filepath.Join(base, "proj")
	pkg := filepath.Join(proj, "pkg")
	deep := filepath.Join(pkg, "sub")
	mkdirs(t, filepath.Join(proj, ".ralph"), filepath.Join(pkg, ".ralph"), filepath.Join(deep, ".git"), filepath.Join(deep, ".ralph"))
	listed := map[string]bool{proj: true}
	r := testRules(t, base)
	r.listed = func(d string) bool { return listed[d] }
	got := r.walk(deep)
	if got.Root != proj || got.Note() != "pkg/sub/.ralph was not made by ralph for you (a command may have made it); the project is "+proj {
		t.Fatalf("unlisted nested .ralph/: %+v (%q), want %s", got, got.Note(), proj)
	}
	listed[deep] = true
	if got := r.walk(deep); got.Root != deep {
		t.Fatalf("listed nested project: %+v, want %s", got, deep)
	}
	r.listed = nil
	if got := r.walk(pkg); got.Root != pkg {
		t.Fatalf("no registry: %+v, want %s", got, pkg)
	}
}
