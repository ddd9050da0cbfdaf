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

// TestTemporalWorkerTakesTheRunsSettingsOnlyToTighten: against a Temporal
// dev server, ralph run --engine temporal --model X --sandbox read-only
// has the worker ask its endpoint for model X, with the agent's commands
// in a read-only sandbox; a --base-url the worker's config does not allow
// stops the run in one sentence with exit 2, and the worker's API key
// never reaches that URL.
func TestTemporalWorkerTakesTheRunsSettingsOnlyToTighten(t *testing.T) {
	t.Parallel()
	addr := startDevServer(t)
	const key = "sk-worker-secret-58"
	var mu sync.Mutex
	var outputs []string // what the agent's command answered
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "Your task"):
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": "touch made.txt && echo WROTE"})}}}
		case last.Role == "tool" && last.Name == "run_command":
			mu.Lock()
			outputs = append(outputs, last.Content)
			mu.Unlock()
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": "t1", "summary": "tried"})}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	attacker := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "thanks"} })
	t.Cleanup(attacker.Close)

	workerEnv := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY="+key), personGit...)
	w := startWorker(t, addr, workerEnv)
	// The starter has no key of its own: the worker's is the one used.
	starterEnv := append(cleanEnv(t), personGit...)

	project, remoteDir := temporalProject(t, "make made.txt")
	r := ralph(t, project, starterEnv, nil, "run", "--engine", "temporal", "--address", addr, "--model", "model-x", "--sandbox", "read-only", "-y")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s\nworker:\n%s", r.code, r.stdout, r.stderr, w.out.String())
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the worker never asked its model")
	}
	for _, q := range reqs {
		if q.Request.Model != "model-x" {
			t.Fatalf("the worker asked for model %q, not the run's model-x", q.Request.Model)
		}
	}
	mu.Lock()
	said := strings.Join(outputs, "\n")
	mu.Unlock()
	if strings.Contains(said, "WROTE") {
		t.Fatalf("the agent's command wrote in the worker's checkout although the run asked for read-only:\n%s", said)
	}
	if _, err := os.Stat(filepath.Join(onRemote(t, remoteDir), "made.txt")); err == nil {
		t.Fatal("made.txt reached the remote: the read-only sandbox was dropped on the way")
	}

	// An endpoint the worker's config does not allow: refused, exit 2,
	// and nothing reaches it.
	project2, _ := temporalProject(t, "make made.txt")
	r = ralph(t, project2, starterEnv, nil, "run", "--engine", "temporal", "--address", addr, "--base-url", attacker.URL, "-y")
	if r.code != 2 || !strings.Contains(r.stderr, "--base-url") || !strings.Contains(r.stderr, "allow_base_urls") {
		t.Fatalf("exit %d, want 2 and a sentence naming --base-url\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("the agent's command answered: %s\nthe refusal: %s", said, strings.TrimSpace(r.stderr))
	if n := len(attacker.Requests()); n != 0 {
		t.Fatalf("the worker sent %d requests (with its key) to the run's --base-url", n)
	}
}

// TestTemporalVerifyRunsInTheWorkersSandbox: the run's --verify is the
// starter's, not the worker's person's, so it runs in the worker's
// sandbox even where the worker's own config lets its person's --verify
// out (verify_unsandboxed): a verify command that writes in the worker's
// home is stopped there, and the task fails.
func TestTemporalVerifyRunsInTheWorkersSandbox(t *testing.T) {
	t.Parallel()
	addr := startDevServer(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	mustWrite(t, filepath.Join(home, ".config", "ralph", "config.toml"), "verify_unsandboxed = true\n")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	escaped := filepath.Join(home, "escaped")
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == "user" && strings.Contains(last.Content, "Your task") {
			b, _ := json.Marshal(map[string]string{"id": "t1", "summary": "nothing to do"})
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: string(b)}}}
		}
		return llmtest.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	workerEnv := append(cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=sk-worker",
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+tmp), personGit...)
	w := startWorker(t, addr, workerEnv)
	project, _ := temporalProject(t, "check it")
	r := ralph(t, project, append(cleanEnv(t), personGit...), nil, "run", "--engine", "temporal", "--address", addr, "-y",
		"--retries", "0", "--on-error", "skip", "--verify", "touch "+escaped)
	if _, err := os.Stat(escaped); err == nil {
		t.Fatalf("the run's --verify wrote in the worker's home: it ran outside the worker's sandbox\nworker:\n%s", w.out.String())
	}
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "1 failed") {
		t.Fatalf("exit %d, want 1 with the task failed by its verify command\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
