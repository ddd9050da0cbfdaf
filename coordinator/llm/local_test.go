package llm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

func TestIsLocal(t *testing.T) {
	for u, want := range map[string]bool{
		"http://localhost:11434/v1": true, "http://127.0.0.1:8080/v1": true, "http://[::1]:1234/v1": true,
		"http://192.168.1.20:11434/v1": true, "http://10.0.0.5/v1": true, "http://gpu-box.local:8000/v1": true,
		"https://api.openai.com/v1": false, "https://openrouter.ai/api/v1": false, "http://8.8.8.8/v1": false,
	} {
		if got := isLocal(u); got != want {
			t.Errorf("isLocal(%q) = %v", u, got)
		}
	}
}

// waits collects the waiting notices of a call.
type waits struct {
	mu   sync.Mutex
	list []WaitInfo
}

func (w *waits) emit(d Delta) {
	if d.Waiting != nil && d.Waiting.Silent > 0 {
		w.mu.Lock()
		w.list = append(w.list, *d.Waiting)
		w.mu.Unlock()
	}
}

func (w *waits) last() WaitInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.list) == 0 {
		return WaitInfo{}
	}
	return w.list[len(w.list)-1]
}

// TestLocalModelReadsItsPrompt: a local model that reads a long prompt
// for longer than the idle timeout before its first word is waited for
// (issue 36 item 18: it was given up after the idle timeout, twice), the
// waiting notice says how long ralph waits; a local model silent past
// that is given up with a sentence that says so.
func TestLocalModelReadsItsPrompt(t *testing.T) {
	cfg := fastConfig()
	cfg.IdleTimeout, cfg.WaitNotice, cfg.MaxAttempts = 300*time.Millisecond, 100*time.Millisecond, 2
	srv := serveResponses(t, llmtest.Response{Text: "read it all", DelayMS: 1500})
	var w waits
	resp, err := clientFor(srv, cfg).Stream(context.Background(), userRequest("a long prompt"), w.emit)
	if err != nil || resp.Message.Content != "read it all" || len(srv.Requests()) != 1 {
		t.Fatalf("err %v, answer %q after %d requests", err, resp.Message.Content, len(srv.Requests()))
	}
	if got := w.last(); got.Limit != 3*time.Second || got.Working {
		t.Fatalf("the last notice was %+v, want the 3 s limit of a local model", got)
	}

	cfg.FirstByteTimeout = 400 * time.Millisecond
	srv = serve(t, &llmtest.Scenario{Loop: true, Responses: []llmtest.Response{{Text: "late", DelayMS: 10000}}})
	_, err = clientFor(srv, cfg).Stream(context.Background(), userRequest("a long prompt"), nil)
	wantErrorKind(t, err, ErrStalled, "did not begin its answer within 400ms after 2 attempts", "the time a local model is given to read the prompt")
}

// TestOllamaWorkingIsWaitedFor: an Ollama that lists the model as loaded
// is reading the prompt, and is waited for past FirstByteTimeout.
func TestOllamaWorkingIsWaitedFor(t *testing.T) {
	cfg := fastConfig()
	cfg.IdleTimeout, cfg.FirstByteTimeout, cfg.WaitNotice = 200*time.Millisecond, 400*time.Millisecond, 100*time.Millisecond
	srv := serve(t, &llmtest.Scenario{Flavor: "ollama", Responses: []llmtest.Response{{Text: "done reading", DelayMS: 1500}}})
	c := clientFor(srv, cfg)
	c.dialect.Store(dialectByFingerprint("fp_ollama")) // as after an earlier answer with Ollama's fingerprint
	var w waits
	resp, err := c.Stream(context.Background(), userRequest("a long prompt"), w.emit)
	if err != nil || resp.Message.Content != "done reading" {
		t.Fatalf("err %v, answer %q", err, resp.Message.Content)
	}
	if got := w.last(); !got.Working || got.Limit != ollamaPatience*cfg.FirstByteTimeout {
		t.Fatalf("the last notice was %+v, want Ollama working", got)
	}
	if srv.APIRequests("/api/ps") == 0 {
		t.Fatal("ralph never asked Ollama whether it was working")
	}
}
