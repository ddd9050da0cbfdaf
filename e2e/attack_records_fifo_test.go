//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 88, cause 7: a FIFO where ralph writes (or reads) one of its own
// files hung it. complete_task blocked for ever on a FIFO at
// RALPH_PROGRESS.md (the default sandbox: the project's root is the
// model's), and in the fallback, where a command may write .ralph/, a FIFO
// at .ralph/.gitignore, .ralph/session.lock or .ralph/session.json hung
// every later ralph, `ralph status` and `ralph undo`. Now every open of a
// state file goes through the project's door without blocking and takes
// only a regular file: each of them returns in seconds, having said in one
// sentence what it found, or having put its own file back.

// fifoLimit is how long a run may take with a FIFO in its way: a hang is
// for ever, and every run here takes a second or two.
const fifoLimit = 60 * time.Second

// fifoTargets are the state files a command plants a FIFO at (a glob,
// for a session's own record), each with whether a command can reach it
// only in the fallback (where .ralph/ is writable).
var fifoTargets = []struct {
	name, path string
	fallback   bool
}{
	{"progress", "RALPH_PROGRESS.md", false},
	{"gitignore", ".ralph/.gitignore", true},
	{"lock", ".ralph/session.lock", true},
	{"summary", ".ralph/session.json", true},
	{"record", ".ralph/sessions/*/session.json", true},
}

func isFIFO(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// wantQuick fails the test when r took longer than fifoLimit (it hung)
// or failed: a FIFO in ralph's files is refused or replaced, and the work
// goes on.
func wantQuick(t *testing.T, what string, r runResult) {
	t.Helper()
	t.Logf("%s: exit %d in %s\n%s%s", what, r.code, r.dur.Round(time.Millisecond), r.stdout, r.stderr)
	if r.dur > fifoLimit {
		t.Fatalf("%s took %s with a FIFO in ralph's files", what, r.dur)
	}
	if r.code != 0 {
		t.Fatalf("%s failed (exit %d) on a FIFO in ralph's files:\n%s", what, r.code, r.stderr)
	}
}

// TestAttackFIFOsInRalphsFilesHangNothing: the model's command puts a
// FIFO (which nobody writes or reads) at one of ralph's files and then
// calls complete_task; the session, the person's next one-shot, `ralph
// status` and `ralph undo` each return within seconds.
func TestAttackFIFOsInRalphsFilesHangNothing(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, target := range fifoTargets {
			if target.fallback && mode.env == nil {
				continue
			}
			t.Run(mode.name+"/"+target.name, func(t *testing.T) {
				t.Parallel()
				proj, home := attackLayout(t)
				writeFileT(t, filepath.Join(proj, "RALPH_TASKS.md"), "- [ ] write one\n")
				ts := newTurnsServer(t,
					cmdCall("for f in "+target.path+"; do rm -f $f && mkfifo $f; done && ls -l "+target.path+" && echo planted"),
					[]toolCall{{name: "complete_task", args: jsonArgs(map[string]string{"id": "write one", "summary": "wrote it"})}})
				env := attackEnv(t, home, ts.URL, mode.env)
				r := ralphWithin(t, fifoLimit, ralphBin, proj, env, nil, "-y", "set up the pipe")
				wantQuick(t, "the session planting the FIFO", r)
				if !strings.Contains(ts.sent(), "planted") {
					t.Fatalf("the command could not plant the FIFO, so the test proves nothing:\n%s", ts.sent())
				}
				if target.name == "progress" && !strings.Contains(ts.sent(), "RALPH_PROGRESS.md is a named pipe (FIFO), not a regular file, so ralph did not write to it") {
					t.Fatalf("complete_task did not tell the model in one sentence that it met a FIFO:\n%s", ts.sent())
				}
				path := filepath.Join(proj, target.path)
				if strings.Contains(target.path, "*") {
					path = filepath.Join(sessionDir(t, proj), "session.json")
				}
				if !isFIFO(path) {
					// ralph's own save at the session's end put its file
					// back; a command run after it (ralph killed before
					// its save) leaves the FIFO: planted again from
					// outside, as the state the next ralph meets.
					t.Logf("%s is no FIFO after the session (ralph replaced it); planting it again", target.path)
					_ = os.Remove(path)
					if err := syscall.Mkfifo(path, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				next, _ := commandsServer(t, "echo x > f1")
				env = attackEnv(t, home, next.URL, mode.env)
				r = ralphWithin(t, fifoLimit, ralphBin, proj, env, nil, "-y", "set up more")
				wantQuick(t, "ralph", r)
				// What ralph replaced of its own, it says in one line.
				if said := map[string]string{"lock": "was a named pipe (FIFO), which ralph never makes", "summary": "was corrupt; kept it as"}[target.name]; !strings.Contains(r.stderr, said) {
					t.Fatalf("ralph did not say %q:\n%s", said, r.stderr)
				}
				wantQuick(t, "ralph status", ralphWithin(t, fifoLimit, ralphBin, proj, env, nil, "status"))
				if target.name == "record" {
					// The planted record's session, the latest, goes on.
					wantQuick(t, "ralph resume", ralphWithin(t, fifoLimit, ralphBin, proj, env, nil, "-y", "resume", filepath.Base(filepath.Dir(path))))
				}
				wantQuick(t, "ralph undo", ralphWithin(t, fifoLimit, ralphBin, proj, env, nil, "undo"))
			})
		}
	}
}
