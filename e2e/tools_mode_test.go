package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The tools a model is offered follow from the session's mode, and its
// system prompt states the mode, once (docs/sandbox.md, "What the model
// is told"; issue 58).

// offered are the names of the tools a request offered the model.
func offered(r llmtest.RecordedRequest) []string {
	var out []string
	for _, tool := range r.Request.Tools {
		if tool.Function != nil {
			out = append(out, tool.Function.Name)
		}
	}
	return out
}

// systemOf is a request's system prompt.
func systemOf(t *testing.T, r llmtest.RecordedRequest) string {
	t.Helper()
	if len(r.Request.Messages) == 0 || r.Request.Messages[0].Role != "system" {
		t.Fatalf("request %d has no system prompt first", r.Index)
	}
	return r.Request.Messages[0].Content
}

// TestReadOnlyRunOffersNoWritersAndFinishesTasks: `ralph run --sandbox
// read-only` offers the task's agent no write_file or edit_file (it was
// offered both, and refused when it called them), but keeps complete_task,
// through which the run still finishes its task.
func TestReadOnlyRunOffersNoWritersAndFinishesTasks(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			srv := llmtest.NewServerFunc(verifyModel) // claims each task at once
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			writeTasks(t, dir, "read the code")
			r := ralph(t, dir, cleanEnv(t, mode.env...), nil, "--base-url", srv.URL, "-y", "--sandbox", "read-only", "--json", "run")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request")
			}
			for _, req := range reqs {
				got := offered(req)
				if slices.Contains(got, "write_file") || slices.Contains(got, "edit_file") {
					t.Fatalf("request %d offers a writer under read-only: %v", req.Index, got)
				}
				if !slices.Contains(got, "complete_task") || !slices.Contains(got, "read_file") {
					t.Fatalf("request %d does not offer complete_task and read_file: %v", req.Index, got)
				}
			}
			if tasks, _ := os.ReadFile(filepath.Join(dir, "RALPH_TASKS.md")); !strings.Contains(string(tasks), "- [x] read the code") {
				t.Fatalf("the task is not done:\n%s", tasks)
			}
		})
	}
}

// TestNoNetworkIsStatedAndOffersNothingThatNeedsIt: with --no-network
// the system prompt says the network is off, and the tools offered are
// the ones offered with the network less any that needs it (none of
// ralph's own reaches the network itself: commands are held to it by
// the sandbox).
func TestNoNetworkIsStatedAndOffersNothingThatNeedsIt(t *testing.T) {
	t.Parallel()
	tools := map[bool][]string{}
	for _, noNet := range []bool{false, true} {
		srv := inlineServer(t, textScenario(t, "done"))
		args := []string{"-y", "--base-url", srv.URL, "say hi"}
		if noNet {
			args = append([]string{"--no-network"}, args...)
		}
		r := ralph(t, t.TempDir(), cleanEnv(t), nil, args...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		req := srv.Requests()[0]
		want := "network: on"
		if noNet {
			want = "network: off (--no-network)"
		}
		if sys := systemOf(t, req); !strings.Contains(sys, want) {
			t.Fatalf("no-network %v: the system prompt does not say %q:\n%s", noNet, want, sys)
		}
		tools[noNet] = offered(req)
	}
	// web_fetch reaches the network from ralph's own process, so it alone
	// is not offered without the network; commands stay, sandboxed.
	withNet := slices.DeleteFunc(slices.Clone(tools[false]), func(s string) bool { return s == "web_fetch" })
	if !slices.Equal(tools[true], withNet) || !slices.Contains(tools[true], "run_command") || !slices.Contains(tools[false], "web_fetch") {
		t.Fatalf("offered with the network %v, without %v", tools[false], tools[true])
	}
}

// TestSystemPromptStatesTheSessionOnce: the first request's system prompt
// states the sandbox mode, the network, the approval policy, the OS and
// the shell, and names no tool the mode does not offer; the second
// request of the session sends it byte for byte.
func TestSystemPromptStatesTheSessionOnce(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, toolScenario(t, "look", [][]toolCall{{{"list_files", `{}`}}}, "done"))
	r := ralph(t, t.TempDir(), cleanEnv(t), nil, "-y", "--sandbox", "read-only", "--base-url", srv.URL, "look around")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first := systemOf(t, reqs[0])
	for _, want := range []string{"sandbox: read-only", "network: on", "approval policy: auto (--yes)", "os: " + runtime.GOOS, "shell: bash"} {
		if !strings.Contains(first, want) {
			t.Errorf("the system prompt does not state %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "read_file, write_file") {
		t.Errorf("the system prompt names write_file under read-only:\n%s", first)
	}
	if second := systemOf(t, reqs[1]); second != first {
		t.Fatalf("the second request's system prompt differs:\n%s\n---\n%s", first, second)
	}
}

// TestContinueWithOtherSettingsSaysWhatChanged: `ralph -c --sandbox
// read-only` after a workspace-write session keeps the session's system
// prompt byte for byte (its prefix is cached), offers no writer, and
// tells the model in the next user turn that the sandbox is read-only
// now.
func TestContinueWithOtherSettingsSaysWhatChanged(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, textScenario(t, "first", "second"))
	dir := t.TempDir()
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "-y", "--base-url", srv.URL, "write things"); r.code != 0 {
		t.Fatalf("first: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "-y", "-c", "--sandbox", "read-only", "--base-url", srv.URL, "now only look"); r.code != 0 {
		t.Fatalf("-c: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, second := systemOf(t, reqs[0]), systemOf(t, reqs[1])
	if !strings.Contains(first, "sandbox: workspace-write") || second != first {
		t.Fatalf("the continued session's system prompt is not the first one:\n%s\n---\n%s", first, second)
	}
	msgs := reqs[1].Request.Messages
	last := msgs[len(msgs)-1]
	if last.Role != "user" || !strings.Contains(last.Content, "sandbox is now read-only") || !strings.HasSuffix(last.Content, "now only look") {
		t.Fatalf("the next user turn does not say what changed:\n%s", last.Content)
	}
	if strings.Contains(last.Content, "network is now") {
		t.Fatalf("the note names a setting that did not change:\n%s", last.Content)
	}
	if got := offered(reqs[1]); slices.Contains(got, "write_file") || slices.Contains(got, "edit_file") {
		t.Fatalf("the continued read-only session offers a writer: %v", got)
	}
}
