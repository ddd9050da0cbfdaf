package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 66, cause 9: the person's PreToolUse guard never saw some commands
// ralph runs for the model: a custom command's !`…` lines (run with a
// context that carried no hooks) and the verify commands (a task's
// Verify: line, a plan's validation commands, the person's --verify),
// which ran outside the tool door. docs/hooks.md promises the tool
// events fire at the one door every tool call goes through. Now each
// fires PreToolUse as Bash with the command as written; a deny stops
// it, and for a verify command a deny or an updatedInput that rewrites
// it fails the attempt, never passes it.

// guard66 is the person's PreToolUse hook on Bash: it logs what it is
// given into the project (which the sandbox, where the person's hooks
// run by default, lets it write), denies a command that says DENY66 and
// rewrites one that says REWRITE66 to `true`.
const guard66 = `in=$(cat); printf '%s\n' "$in" >> "$CLAUDE_PROJECT_DIR/hook66.log"; ` +
	`case "$in" in ` +
	`*DENY66*) printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard66 says no"}}';; ` +
	`*REWRITE66*) printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"true"}}}';; ` +
	`esac; exit 0`

// hook66Seen are the commands the guard saw as Bash, in order, with the
// ids ralph gave their calls.
func hook66Seen(t *testing.T, proj string) (commands, ids []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(proj, "hook66.log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var in struct {
			Event     string `json:"hook_event_name"`
			ToolName  string `json:"tool_name"`
			ToolUseID string `json:"tool_use_id"`
			ToolInput struct {
				Command string `json:"command"`
			} `json:"tool_input"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatalf("the hook's input is no JSON: %v: %q", err, sc.Text())
		}
		if in.Event == "PreToolUse" && in.ToolName == "Bash" {
			commands, ids = append(commands, in.ToolInput.Command), append(ids, in.ToolUseID)
		}
	}
	return commands, ids
}

func contains66(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAttack66HookSeesCustomCommandShellLine: a custom command's !` line
// fires the person's PreToolUse guard as Bash with the command as
// written; the guard's deny keeps it from running, and nothing is sent.
func TestAttack66HookSeesCustomCommandShellLine(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			personHooks(t, home, `{"PreToolUse":`+hookGroup("Bash", guard66)+`}`)
			mustWrite(t, filepath.Join(proj, ".claude/commands/x66.md"), "---\ndescription: say x\n---\nSaid: !`echo x66`\n")
			// The line the guard denies would send a secret of the
			// project's to the endpoint.
			const secret = "sk-live-guard66-0123456789"
			mustWrite(t, filepath.Join(proj, "secret66.txt"), secret+"\n")
			mustWrite(t, filepath.Join(proj, ".claude/commands/deny66.md"), "---\ndescription: denied\n---\nSaid: !`touch shell66-ran; cat secret66.txt; echo DENY66`\n")
			srv := inlineServer(t, `{"name":"shell66","loop":true,"responses":[{"text":"ok."}]}`)
			env := attackEnv(t, home, srv.URL, append([]string{"CI=true"}, mode.env...))

			r := ralph(t, proj, env, nil, "-y", "/x66")
			if r.code != 0 {
				t.Fatalf("/x66: exit %d\n%s", r.code, r.stderr)
			}
			if seen, ids := hook66Seen(t, proj); !contains66(seen, "echo x66") {
				t.Fatalf("BROKEN: the PreToolUse guard did not see the shell line as Bash; it saw %q (ids %q)\n%s", seen, ids, r.stderr)
			}
			if !sentToModel(srv, "Said: x66") {
				t.Fatal("the allowed shell line's output did not reach the model")
			}

			before := len(srv.Requests())
			r = ralph(t, proj, env, nil, "-y", "/deny66")
			if exists(filepath.Join(proj, "shell66-ran")) {
				t.Fatalf("BROKEN: the shell line the guard denied ran\n%s", r.stderr)
			}
			if sentToModel(srv, secret) {
				t.Fatalf("BROKEN: the denied shell line's output (a secret) reached the endpoint")
			}
			if r.code == 0 || len(srv.Requests()) != before || !strings.Contains(r.stderr, "guard66 says no") {
				t.Fatalf("a denied shell line: exit %d, %d requests sent, stderr:\n%s", r.code, len(srv.Requests())-before, r.stderr)
			}
			wantBashrc(t, home)
		})
	}
}

// sessionSays66 reports whether the session's records (its events, the
// attempt's verify output) hold s.
func sessionSays66(t *testing.T, proj, s string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(sessionDir(t, proj), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), s) {
				found = true
			}
		}
		return nil
	})
	return found
}

// taskDone reports whether RALPH_TASKS.md marks its task done.
func taskDone(t *testing.T, proj string) bool {
	return strings.Contains(readFileT(t, filepath.Join(proj, "RALPH_TASKS.md")), "- [x]")
}

// TestAttack66HookGuardsTaskVerify: `ralph run` on a task with a
// Verify: line fires the guard with the verify command; the guard's deny
// fails the attempt (the command does not run, the task is not done),
// and an updatedInput that rewrites a failing verify to `true` does not
// make it pass. A verify the guard lets through passes as before.
func TestAttack66HookGuardsTaskVerify(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		for _, c := range []struct {
			name, verify string
			done         bool
		}{
			{"allowed", "touch verify66-ran", true},
			{"denied", "touch verify66-ran; echo DENY66", false},
			{"rewritten", "false REWRITE66", false},
		} {
			t.Run(mode.name+"/"+c.name, func(t *testing.T) {
				proj, home := attackLayout(t)
				personHooks(t, home, `{"PreToolUse":`+hookGroup("Bash", guard66)+`}`)
				srv := llmtest.NewServerFunc(verifyModel)
				t.Cleanup(srv.Close)
				env := attackEnv(t, home, srv.URL, mode.env)
				mustWrite(t, filepath.Join(proj, "RALPH_TASKS.md"), "# Tasks\n\n- [ ] one <!-- ralph:id=t1 -->\n  Verify: `"+c.verify+"`\n")
				gitCommitAll(t, proj)
				r := ralph(t, proj, env, nil, "-y", "run", "--retries", "0")
				seen, _ := hook66Seen(t, proj)
				if !contains66(seen, c.verify) {
					t.Fatalf("BROKEN: the PreToolUse guard did not see the Verify: line as Bash; it saw %q\n%s", seen, r.stderr)
				}
				if got := taskDone(t, proj); got != c.done {
					t.Fatalf("BROKEN: task done %v, want %v (exit %d)\n%s", got, c.done, r.code, r.stderr)
				}
				if ran := exists(filepath.Join(proj, "verify66-ran")); ran != c.done {
					t.Fatalf("the verify command ran: %v, want %v\n%s", ran, c.done, r.stderr)
				}
				if !c.done && !sessionSays66(t, proj, "did not run as written") {
					t.Errorf("the session's records do not say why the verify failed")
				}
			})
		}
	}
}

// TestAttack66HookSeesPlanAndPersonVerify: a plan's validation commands
// and the person's --verify fire the guard as Bash too, and its deny
// fails a plan's validation command as it fails a Verify: line.
func TestAttack66HookSeesPlanAndPersonVerify(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			personHooks(t, home, `{"PreToolUse":`+hookGroup("Bash", guard66)+`}`)
			srv := llmtest.NewServerFunc(verifyModel)
			t.Cleanup(srv.Close)
			env := attackEnv(t, home, srv.URL, mode.env)
			mustWrite(t, filepath.Join(proj, "RALPH_TASKS.md"), "# Tasks\n\n- [ ] one <!-- ralph:id=t1 -->\n")
			gitCommitAll(t, proj)
			r := ralph(t, proj, env, nil, "-y", "run", "--retries", "0", "--verify", "touch person66.txt")
			if seen, _ := hook66Seen(t, proj); !contains66(seen, "touch person66.txt") {
				t.Fatalf("BROKEN: the PreToolUse guard did not see the person's --verify; it saw %q\n%s", seen, r.stderr)
			}
			if !taskDone(t, proj) || !exists(filepath.Join(proj, "person66.txt")) {
				t.Fatalf("the allowed --verify did not pass\n%s", r.stderr)
			}

			plan := "# Plan: p\n\n## Implementation Steps\n\n### Task 1: one\n\n- [ ] do it\n\n## Validation Commands\n\n- `touch plan66.txt`\n"
			mustWrite(t, filepath.Join(proj, "docs", "plans", "p.md"), plan)
			r = ralph(t, proj, env, nil, "-y", "run", "--retries", "0", "docs/plans/p.md")
			if seen, _ := hook66Seen(t, proj); !contains66(seen, "touch plan66.txt") {
				t.Fatalf("BROKEN: the PreToolUse guard did not see the plan's validation command; it saw %q\n%s", seen, r.stderr)
			}
			if !exists(filepath.Join(proj, "plan66.txt")) {
				t.Fatalf("the allowed validation command did not run\n%s", r.stderr)
			}

			mustWrite(t, filepath.Join(proj, "docs", "plans", "q.md"),
				"# Plan: q\n\n## Implementation Steps\n\n### Task 1: two\n\n- [ ] do it\n\n## Validation Commands\n\n- `touch plan66-denied.txt; echo DENY66`\n")
			r = ralph(t, proj, env, nil, "-y", "run", "--retries", "0", "docs/plans/q.md")
			if exists(filepath.Join(proj, "plan66-denied.txt")) {
				t.Fatalf("BROKEN: the validation command the guard denied ran\n%s", r.stderr)
			}
			if strings.Contains(readFileT(t, filepath.Join(proj, "docs", "plans", "q.md")), "- [x]") {
				t.Fatalf("BROKEN: the plan's task is done though its validation command was denied\n%s", r.stderr)
			}
		})
	}
}
