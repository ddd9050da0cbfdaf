package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// TestBackgroundCommandEndsWithItsTaskAttempt: in `ralph run`, a
// background command the first task's worker starts (and leaves running)
// dies when that attempt ends, before its work is verified: the verify
// command finds no such process, nor does the second task's first model
// request; the run finishes with both tasks done, and the session's
// decisions say which commands were stopped. In the sandbox and without
// it (where the verify command sees every process in /proc).
func TestBackgroundCommandEndsWithItsTaskAttempt(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []string{"", "danger-full-access"} {
		t.Run("sandbox="+sandbox, func(t *testing.T) {
			t.Parallel()
			mark := bgMark()
			// The verify command's own command line must not match: the
			// bracket matches the digit, not itself.
			pattern := mark[:3] + "[" + mark[3:4] + "]" + mark[4:]
			var mu sync.Mutex
			var atTask2 []string
			args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
			srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
				msgs := r.Request.Messages
				var id string
				for _, m := range msgs {
					if sm := taskPromptRe.FindStringSubmatch(m.Content); m.Role == "user" && sm != nil {
						id = sm[1]
					}
				}
				last := msgs[len(msgs)-1]
				switch {
				case id == "t1" && last.Role == "user":
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: bgArgs("sleep " + mark)}}}
				case id == "t2" && last.Role == "user":
					mu.Lock()
					atTask2 = bgAlive("sleep " + mark)
					mu.Unlock()
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "checked"})}}}
				case id != "" && last.Role == "tool" && last.Name == "run_command":
					return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": id, "summary": "started it"})}}}
				}
				return llmtest.Response{Text: "done with " + id}
			})
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			writeTasks(t, dir, "start the server", "check the server")
			flags := []string{"--base-url", srv.URL, "-y", "--json"}
			if sandbox != "" {
				flags = append(flags, "--sandbox", sandbox)
			}
			verify := "true"
			if sandbox == "danger-full-access" {
				verify = "! grep -qsa '" + pattern + "' /proc/[0-9]*/cmdline"
			}
			r := ralph(t, dir, cleanEnv(t), nil, append(flags, "run", "--verify", verify, "--retries", "0")...)
			bgGone(t, "sleep "+mark, "after ralph run exited")
			if r.code != 0 {
				t.Fatalf("exit %d (a verify that saw the command running fails task 1)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			if m := resultLine(t, r.stdout); m["tasks"].(map[string]any)["done"] != 2.0 {
				t.Fatalf("result %v", m)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(atTask2) != 0 {
				t.Fatalf("task 1's background command still ran when task 2 began: %v", atTask2)
			}
			sessions, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "decisions.jsonl"))
			var decisions string
			for _, s := range sessions {
				b, _ := os.ReadFile(s)
				decisions += string(b)
			}
			if !strings.Contains(decisions, `"kind":"background_stopped"`) || !strings.Contains(decisions, "before its work is verified") {
				t.Fatalf("no decision says the attempt's background command was stopped:\n%s", decisions)
			}
		})
	}
}
