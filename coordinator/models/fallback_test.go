package models

import (
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/config"
)

type fakeEnv map[string]string

func (e fakeEnv) get(k string) string { return e[k] }

func fallbackConfig(names ...config.FallbackModel) config.Fallback {
	return config.Fallback{FallbackModels: names}
}

// Another provider's model is a fallback only when the person named it
// and its key is set; a project may name the session's own provider's
// models only. Each refusal is one sentence, before anything starts.
func TestFallbackAcrossProviders(t *testing.T) {
	anthropic := llm.New(llm.Config{BaseURL: "https://api.anthropic.com", Provider: "anthropic"})
	tests := []struct {
		name    string
		client  *llm.Client
		entry   config.FallbackModel
		env     fakeEnv
		wantErr string
	}{
		{"own provider, project", anthropic, config.FallbackModel{Name: "claude-haiku-4-5", Project: true}, nil, ""},
		{"own provider named, project", anthropic, config.FallbackModel{Name: "anthropic:claude-haiku-4-5", Project: true}, nil, ""},
		{"another by its model name, no key", anthropic, config.FallbackModel{Name: "gemini-2.5-pro"}, nil, "GEMINI_API_KEY is not set"},
		{"another named, no key", anthropic, config.FallbackModel{Name: "openai:gpt-4o"}, nil, "OPENAI_API_KEY is not set"},
		{"another, key set", anthropic, config.FallbackModel{Name: "gemini-2.5-pro"}, fakeEnv{"GEMINI_API_KEY": "g"}, ""},
		{"another, from a project", anthropic, config.FallbackModel{Name: "gemini-2.5-pro", Project: true}, fakeEnv{"GEMINI_API_KEY": "g"}, "a project may name fallback models of the session's own provider only"},
		{"local ollama needs no key", anthropic, config.FallbackModel{Name: "ollama:qwen2.5-coder:7b"}, nil, ""},
		// An endpoint known by its URL serves any name: a bare name stays there.
		{"URL endpoint, bare name", llm.New(llm.Config{BaseURL: "http://gateway/v1"}), config.FallbackModel{Name: "claude-haiku-4-5", Project: true}, nil, ""},
		{"URL endpoint, named provider", llm.New(llm.Config{BaseURL: "http://gateway/v1"}), config.FallbackModel{Name: "anthropic:claude-haiku-4-5"}, nil, "ANTHROPIC_API_KEY is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := WithFallbacks(tt.client, fallbackConfig(tt.entry), tt.env.get)
			if tt.wantErr == "" {
				if err != nil || c != tt.client {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Count(err.Error(), ". ") > 0 {
				t.Errorf("err = %v, want one sentence saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestFallbackProvider(t *testing.T) {
	for _, tt := range []struct {
		entry, session, provider, model string
		other                           bool
	}{
		{"gpt-4o", "openai", "", "gpt-4o", false},
		{"claude-sonnet-4-5", "openai", "anthropic", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "", "", "claude-sonnet-4-5", false},
		{"gemini:gemini-2.5-flash", "", "gemini", "gemini-2.5-flash", true},
		{"ollama:qwen2.5:7b", "ollama", "ollama", "qwen2.5:7b", false},
		{"qwen2.5:7b", "ollama", "", "qwen2.5:7b", false},
	} {
		p, model, other := fallbackProvider(tt.entry, tt.session)
		if p.Name != tt.provider || model != tt.model || other != tt.other {
			t.Errorf("fallbackProvider(%q, %q) = %q, %q, %v", tt.entry, tt.session, p.Name, model, other)
		}
	}
}

func TestTooManyFallbackModels(t *testing.T) {
	var fb config.Fallback
	fb.SetFallbackModels([]string{"a", "b", "c", "d"})
	if _, err := WithFallbacks(llm.New(llm.Config{}), fb, fakeEnv{}.get); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("err = %v", err)
	}
}
