//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goneOwner makes the runners made until the returned function is called
// records of a ralph that is gone: a process that exited.
func goneOwner(t *testing.T) (restore func()) {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	was := recordOwner
	// A start time no process has: were the pid taken again, it would
	// still not be this one.
	recordOwner = func() (int, uint64) { return cmd.Process.Pid, 1 }
	return func() { recordOwner = was }
}

// killedMidCommand starts script under p in a runner whose records are a
// gone ralph's, waits for it to touch the file planted, and leaves it as
// a SIGKILL of ralph leaves it: no check after the command, the runner's
// helper stopped.
func killedMidCommand(t *testing.T, p *Policy, script string) {
	t.Helper()
	restore := goneOwner(t)
	r := NewRunner(p)
	restore()
	proc, err := r.Start(context.Background(), Command{Path: "/bin/bash", Args: []string{"bash", "-c", script + " && touch planted && sleep 60"}, Dir: p.Root,
		Env: append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")})
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(p.Root, "planted")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(planted); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not plant")
		}
	}
	os.Remove(planted)
	syscall.Kill(-proc.Pid, syscall.SIGKILL)
	r.killed()
}

// killed leaves r as a SIGKILL of ralph leaves it: its helper gone, and
// neither the check after the command nor Close's last check done.
func (r *Runner) killed() {
	r.mu.Lock()
	s := r.cur
	r.cur, r.closed = nil, true
	r.mu.Unlock()
	if s != nil {
		s.stop()
	}
}

// recordFiles are the records in the tests' state directory.
func recordFiles(t *testing.T, root string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(recordDir(), rootKey(root)+".*"))
	return m
}

// TestKilledRalphsLandlockCheckIsDoneByTheNext: a command under the
// Landlock-only sandbox plants a hook, removes the person's, arms
// .git/config and makes a nested repository with an fsmonitor; ralph is
// killed before its check. The next ralph's RecoverKilled puts the
// project's files back (what was there kept beside), takes the nested
// key back, says so in one line, and leaves no record to do it twice.
func TestKilledRalphsLandlockCheckIsDoneByTheNext(t *testing.T) {
	t.Setenv(NoUserNamespacesEnv, "1")
	f := newFixture(t)
	hook := filepath.Join(f.root, ".git", "hooks", "post-commit")
	mustWrite(t, hook, "#!/bin/sh\necho mine\n")
	config := readFileT(t, filepath.Join(f.root, ".git", "config"))
	p := f.policy(WorkspaceWrite, false)
	p.Notify = func(string) {}
	killedMidCommand(t, p, strings.Join([]string{
		"printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit",
		"rm .git/hooks/post-commit",
		"printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
		"git init -q nest",
		"git -C nest config core.fsmonitor evil",
	}, " && "))
	if len(recordFiles(t, f.root)) != 1 {
		t.Fatalf("the killed ralph left no record: %v", recordFiles(t, f.root))
	}

	var said []string
	if err := RecoverKilled(f.root, func(s string) { said = append(said, s) }); err != nil {
		t.Fatal(err)
	}
	fileIs(t, filepath.Join(f.root, ".git", "hooks", "pre-commit"), "")
	fileIs(t, filepath.Join(f.root, ".git", "hooks", "pre-commit.ralph-set-aside"), "#!/bin/sh\nevil\n")
	fileIs(t, hook, "#!/bin/sh\necho mine\n")
	fileIs(t, filepath.Join(f.root, ".git", "config"), config)
	if b := readFileT(t, filepath.Join(f.root, ".git", "config.ralph-set-aside")); !strings.Contains(b, "fsmonitor") {
		t.Errorf("the command's .git/config was not kept beside: %q", b)
	}
	if b := readFileT(t, filepath.Join(f.root, "nest", ".git", "config")); strings.Contains(b, "fsmonitor") {
		t.Errorf("nest/.git/config kept its fsmonitor:\n%s", b)
	}
	if len(said) != 1 {
		t.Fatalf("said %d lines, want one: %q", len(said), said)
	}
	for _, want := range []string{".git/hooks/pre-commit", ".git/hooks/post-commit", ".git/config", "took back core.fsmonitor in nest/.git/config", "killed"} {
		if !strings.Contains(said[0], want) {
			t.Errorf("the line does not name %q: %s", want, said[0])
		}
	}
	if n := recordFiles(t, f.root); len(n) != 0 {
		t.Errorf("the record is still there: %v", n)
	}
	said = nil
	if err := RecoverKilled(f.root, func(s string) { said = append(said, s) }); err != nil || len(said) != 0 {
		t.Errorf("a second start did the check again: %v %q", err, said)
	}
}

// TestKilledRalphsNestedCheckIsDoneByTheNext is the same under the full
// sandbox, where .git/hooks and .git/config are read-only: the nested
// repository a command made, and a guarded path it created (absent, so
// no mount covered it), are the next ralph's to check.
func TestKilledRalphsNestedCheckIsDoneByTheNext(t *testing.T) {
	f := newFixture(t)
	if _, err := os.Lstat(filepath.Join(f.root, ".git", "commondir")); err == nil {
		t.Skip("git made a commondir")
	}
	mustWrite(t, filepath.Join(f.root, "vendor", "x", "README"), "x\n")
	gitInit(t, filepath.Join(f.root, "vendor", "x"), "core.hooksPath", ".husky") // the person's
	personal := readFileT(t, filepath.Join(f.root, "vendor", "x", ".git", "config"))
	p := f.policy(WorkspaceWrite, false)
	killedMidCommand(t, p, strings.Join([]string{
		"git init -q nest",
		"git -C nest config core.fsmonitor evil",
		"git -C vendor/x config core.pager evil",
		"echo " + f.tmp + " > .git/commondir",
	}, " && "))

	var said []string
	if err := RecoverKilled(f.root, func(s string) { said = append(said, s) }); err != nil {
		t.Fatal(err)
	}
	if b := readFileT(t, filepath.Join(f.root, "nest", ".git", "config")); strings.Contains(b, "fsmonitor") {
		t.Errorf("nest/.git/config kept its fsmonitor:\n%s", b)
	}
	fileIs(t, filepath.Join(f.root, "vendor", "x", ".git", "config"), personal)
	fileIs(t, filepath.Join(f.root, ".git", "commondir"), "")
	if len(said) != 1 || !strings.Contains(said[0], "core.fsmonitor in nest/.git/config") || !strings.Contains(said[0], "core.pager in vendor/x/.git/config") ||
		!strings.Contains(said[0], ".git/commondir") {
		t.Errorf("said %q", said)
	}
}

// TestGuardRecordIsNeverTrustedBlindly: a record that is no JSON, one
// whose seal is not the person's state key's (a command that could
// write ralph's state directory forged it), and one that is not what its
// name says are each a failure said in one sentence, never obeyed.
func TestGuardRecordIsNeverTrustedBlindly(t *testing.T) {
	root := realDir(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(recordDir(), rootKey(root)+"."+strconv.Itoa(gone.Process.Pid)+".1.1"+liveSuffix)
	key, err := sealKey()
	if err != nil {
		t.Fatal(err)
	}
	good := `{"root":"` + root + `","pid":` + strconv.Itoa(gone.Process.Pid) + `,"start":1}`
	for _, c := range []struct{ name, content, want string }{
		{"garbage", "not a record", "is not one ralph wrote"},
		{"forged", recordMagic + seal([]byte("not the key"), []byte(good)) + "\n" + good, "seal"},
		{"not json", recordMagic + seal(key, []byte("{")) + "\n{", "cannot be parsed"},
		{"another root", recordMagic + seal(key, []byte(strings.Replace(good, root, "/elsewhere", 1))) + "\n" + strings.Replace(good, root, "/elsewhere", 1), "not the record its name says"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustWrite(t, name, c.content)
			defer os.Remove(name)
			err := RecoverKilled(root, func(s string) { t.Errorf("said %q", s) })
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), name) || strings.Count(err.Error(), ". ") > 0 {
				t.Errorf("err = %v, want one sentence naming the record and %q", err, c.want)
			}
		})
	}
	mustWrite(t, name, recordMagic+seal(key, []byte(good))+"\n"+good)
	if err := RecoverKilled(root, nil); err != nil {
		t.Errorf("a sealed record that changed nothing: %v", err)
	}
	if _, err := os.Stat(name); err == nil {
		t.Error("the record was not removed once checked")
	}
}

// TestGuardRecordWrittenOnlyWhenItChanges: a command that changes
// nothing the guards know costs two renames of the record, not a write:
// the file keeps its identity; one that changes a nested repository's
// configuration has it written again. Once a command's check has run
// the record is marked clean, and a runner closed removes it.
func TestGuardRecordWrittenOnlyWhenItChanges(t *testing.T) {
	f := newFixture(t)
	gitInit(t, filepath.Join(f.root, "nest"))
	// Change times a second old are trusted (see settled): the guard
	// reads again what changed more recently.
	time.Sleep(1100 * time.Millisecond)
	p := f.policy(WorkspaceWrite, false)
	r := runnerFor(t, p)
	ino := func() uint64 {
		t.Helper()
		m := recordFiles(t, f.root)
		if len(m) != 1 || !strings.HasSuffix(m[0], cleanSuffix) {
			t.Fatalf("records after a command: %v, want one marked clean", m)
		}
		return inode(m[0])
	}
	run(t, p, "true")
	first := ino()
	for range 3 {
		run(t, p, "true")
	}
	if ino() != first {
		t.Error("the record was written again though nothing changed")
	}
	// What the check after it learnt is written before the next
	// command starts.
	run(t, p, "git -C nest config user.name x")
	run(t, p, "true")
	if ino() == first {
		t.Error("the record was not written again when a repository's configuration changed")
	}
	r.Close()
	if m := recordFiles(t, f.root); len(m) != 0 {
		t.Errorf("a closed runner left its record: %v", m)
	}
}

// BenchmarkCommandGuardRecord is a whole command (`true`) under
// workspace-write in a repository with five nested ones, with the
// guards' record kept and without it (as before the record), under the
// full sandbox (the nested repositories' guard) and on Landlock alone
// (with the guard of .git/hooks and .git/config too). Each iteration
// runs one command of each, alternately, so that the machine's load
// weighs on both alike; with -benchtime=200x, 200 commands of each.
func BenchmarkCommandGuardRecord(b *testing.B) {
	for _, mode := range []string{"nested", "landlock"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "landlock" {
				b.Setenv(NoUserNamespacesEnv, "1")
			}
			runner := func(keep bool) func() time.Duration {
				root := b.TempDir()
				gitInit(b, root)
				for n := range 5 {
					gitInit(b, filepath.Join(root, "vendor", strconv.Itoa(n)))
				}
				r := NewRunner(&Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{b.TempDir()}})
				b.Cleanup(r.Close)
				if !keep {
					r.rec = nil
				}
				return func() time.Duration {
					t0 := time.Now()
					proc, err := r.Start(context.Background(), Command{Path: "/bin/true", Args: []string{"true"}, Dir: root})
					if err != nil {
						b.Fatal(err)
					}
					<-proc.Exited()
					syscall.Kill(-proc.Pid, syscall.SIGKILL)
					if _, o := proc.Wait(); o.Err != nil || len(o.Undone)+len(o.Restored) != 0 {
						b.Fatal(o)
					}
					return time.Since(t0)
				}
			}
			with, without := runner(true), runner(false)
			time.Sleep(1100 * time.Millisecond) // see settled
			with()                              // the helper started, the guards primed, the record written
			without()
			var tw, to time.Duration
			b.ResetTimer()
			for range b.N {
				tw += with()
				to += without()
			}
			b.ReportMetric(float64(tw.Nanoseconds())/float64(b.N), "ns/cmd-with")
			b.ReportMetric(float64(to.Nanoseconds())/float64(b.N), "ns/cmd-without")
			b.ReportMetric(float64(tw)/float64(to), "with/without")
		})
	}
}

// BenchmarkGuardRecord is the record's own cost around one command on
// Landlock alone, in a repository with five nested ones: "unchanged" is
// every command's (two renames), "changed" a command's after another
// that changed what the guards know (the record written and fsynced).
func BenchmarkGuardRecord(b *testing.B) {
	root := b.TempDir()
	gitInit(b, root)
	for n := range 5 {
		gitInit(b, filepath.Join(root, "vendor", strconv.Itoa(n)))
	}
	g := newGuardedState(root, nil)
	n := newNestedGuard(root)
	n.prime()
	for _, changed := range []bool{false, true} {
		name := "unchanged"
		if changed {
			name = "changed"
		}
		b.Run(name, func(b *testing.B) {
			rc := newRecorder(root, func(s string) { b.Fatal(s) })
			defer rc.close()
			g.begin()
			rc.begin(g, n, nil)
			rc.end()
			g.end()
			b.ResetTimer()
			for range b.N {
				if changed {
					n.mu.Lock()
					n.gen++
					n.mu.Unlock()
				}
				rc.begin(g, n, nil)
				rc.end()
			}
		})
	}
}
