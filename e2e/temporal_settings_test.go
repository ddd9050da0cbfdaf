package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/fakemodel"
)

// TestTemporalWorkerTakesTheRunsSettingsOnlyToTighten: against a Temporal
// dev server, ralph run --engine temporal --model X --sandbox read-only
// has the worker ask its endpoint for model X, with the agent's commands
// in a read-only sandbox; a --base-url the worker's config does not allow
// stops the run in one sentence with exit 2, and the worker's API key
// never reaches that URL.
func TestTemporalWorkerTakesTheRunsSettingsOnlyToTighten(t *testing.T) {
	addr := startDevServer(t)
	const key = "sk-worker-secret-58"
	var mu sync.Mutex
	var outputs []string // what the agent's command answered
	srv := fakemodel.NewServerFunc(func(r fakemodel.RecordedRequest) fakemodel.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "Your task"):
			return fakemodel.Response{ToolCalls: []fakemodel.ToolCall{{Name: "run_command", Arguments: args(map[string]string{"command": "touch made.txt && echo WROTE"})}}}
		case last.Role == "tool" && last.Name == "run_command":
			mu.Lock()
			outputs = append(outputs, last.Content)
			mu.Unlock()
			return fakemodel.Response{ToolCalls: []fakemodel.ToolCall{{Name: "complete_task", Arguments: args(map[string]string{"id": "t1", "summary": "tried"})}}}
		}
		return fakemodel.Response{Text: "done"}
	})
	t.Cleanup(srv.Close)
	attacker := fakemodel.NewServerFunc(func(fakemodel.RecordedRequest) fakemodel.Response { return fakemodel.Response{Text: "thanks"} })
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
