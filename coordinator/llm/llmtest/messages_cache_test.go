package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// usageOf is a plain Messages answer's usage.
func usageOf(t *testing.T, srv *Server, body string) anthropicUsage {
	t.Helper()
	var m struct {
		Usage anthropicUsage `json:"usage"`
	}
	if err := json.NewDecoder(postAPI(t, srv, "/v1/messages", body).Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m.Usage
}

// conversation is a request of turns user/assistant messages, the last
// block marked for caching, as a client that caches its prefix sends it;
// tools and system marked too.
func conversation(tools string, turns int) string {
	var msgs []string
	for i := 0; i < turns; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		cc := ""
		if i == turns-1 || i == turns-3 {
			cc = `,"cache_control":{"type":"ephemeral"}`
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":"turn %d of a long and winding conversation"%s}]}`, role, i, cc))
	}
	return `{"model":"claude-x","max_tokens":100,"tools":[{"name":"Bash","input_schema":{"type":"object"},"description":"` + tools + `","cache_control":{"type":"ephemeral"}}],` +
		`"system":[{"type":"text","text":"You are a careful agent.","cache_control":{"type":"ephemeral"}}],"messages":[` + strings.Join(msgs, ",") + `]}`
}

// The stand-in's prompt cache: the first request writes its prefix, each
// next one that repeats it (breakpoints moved on, cache_control stripped
// from the hash) reads it and writes only the new part; the three counts
// add up to the prompt; a change of the tools starts afresh.
func TestMessagesPromptCache(t *testing.T) {
	srv := NewServer(&Scenario{Loop: true, Responses: []Response{{Text: "ok"}}})
	defer srv.Close()
	var prev anthropicUsage
	for turns := 1; turns <= 7; turns += 2 {
		body := conversation("runs a command", turns)
		u := usageOf(t, srv, body)
		total := quarter(len(body))
		if u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens != total {
			t.Errorf("turn %d: %+v do not add up to %d", turns, u, total)
		}
		if u.CacheCreation.Ephemeral5m != u.CacheCreationInputTokens || u.CacheCreationInputTokens == 0 {
			t.Errorf("turn %d: cache_creation %+v", turns, u)
		}
		if turns == 1 && u.CacheReadInputTokens != 0 {
			t.Errorf("first request read %d from an empty cache", u.CacheReadInputTokens)
		}
		if turns > 1 && u.CacheReadInputTokens != prev.CacheReadInputTokens+prev.CacheCreationInputTokens {
			t.Errorf("turn %d read %d, want what the previous request cached, %d", turns, u.CacheReadInputTokens, prev.CacheReadInputTokens+prev.CacheCreationInputTokens)
		}
		prev = u
		if rec := srv.Requests()[len(srv.Requests())-1]; rec.CacheRead != u.CacheReadInputTokens || rec.CacheWrite != u.CacheCreationInputTokens {
			t.Errorf("turn %d: recorded %d read, %d written; reported %+v", turns, rec.CacheRead, rec.CacheWrite, u)
		}
	}
	if u := usageOf(t, srv, conversation("runs a shell command", 9)); u.CacheReadInputTokens != 0 {
		t.Errorf("changed tools still read %d from the cache", u.CacheReadInputTokens)
	}
	// A scripted usage with cache counts wins over the simulation.
	srv2 := NewServer(&Scenario{Responses: []Response{{Text: "ok", Usage: &Usage{PromptTokens: 1000, CompletionTokens: 5, CacheReadTokens: 900, CacheWriteTokens: 50}}}})
	defer srv2.Close()
	if u := usageOf(t, srv2, conversation("x", 1)); u.InputTokens != 50 || u.CacheReadInputTokens != 900 || u.CacheCreationInputTokens != 50 {
		t.Errorf("scripted usage %+v", u)
	}
}

// A prefix below the scenario's minimum is not cached, as the real API
// ignores such a breakpoint.
func TestMessagesCacheMinimum(t *testing.T) {
	srv := NewServer(&Scenario{Loop: true, CacheMinTokens: 100000, Responses: []Response{{Text: "ok"}}})
	defer srv.Close()
	for i := 0; i < 2; i++ {
		if u := usageOf(t, srv, conversation("t", 3)); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 {
			t.Errorf("request %d: %+v", i, u)
		}
	}
}

// OpenAI's chat completions report a scripted cache read as
// prompt_tokens_details.cached_tokens.
func TestChatCachedTokens(t *testing.T) {
	srv := NewServer(&Scenario{Responses: []Response{{Text: "ok", Usage: &Usage{PromptTokens: 100, CompletionTokens: 2, CacheReadTokens: 64}}}})
	defer srv.Close()
	m := decode(t, postAPI(t, srv, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`).Body)
	if d := m["usage"].(map[string]any)["prompt_tokens_details"].(map[string]any); d["cached_tokens"] != 64.0 {
		t.Errorf("usage %v", m["usage"])
	}
}
