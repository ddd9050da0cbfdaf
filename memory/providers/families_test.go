package providers

import "testing"

// TestFamilyOf holds the families codex 0.77.0 gives each model name (its
// recorded requests, testdata/codex-tools) and Claude Code's for
// Anthropic's, behind a router's prefix too.
func TestFamilyOf(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]ToolFamily{
		"gpt-5-codex": FamilyCodex, "gpt-5-codex-mini": FamilyCodex, "gpt-5.1-codex": FamilyCodex, "gpt-5.1-codex-mini": FamilyCodex,
		"gpt-5.1-codex-max": FamilyCodex, "gpt-5.2-codex": FamilyCodex, "gpt-5.1": FamilyCodex, "gpt-5.2": FamilyCodex, "GPT-5.5": FamilyCodex,
		"gpt-6-sol": FamilyCodex, "openai/gpt-5-codex": FamilyCodex,
		"gpt-5": FamilyGPT5, "gpt-5-mini": FamilyGPT5, "gpt-5-2025-08-07": FamilyGPT5, "o3": FamilyGPT5, "o4-mini": FamilyGPT5, "o1": FamilyGPT5,
		"openai/gpt-5": FamilyGPT5, "o3-pro": FamilyGPT5,
		"codex-mini-latest": FamilyCodexMini,
		"gpt-oss-120b":      FamilyGPTOSS, "openai/gpt-oss-20b": FamilyGPTOSS,
		"claude-sonnet-4-5": FamilyClaude, "anthropic/claude-sonnet-4.5": FamilyClaude, "sonnet": FamilyClaude,
		"gpt-4o-mini": FamilyRalph, "gpt-4.1": FamilyRalph, "qwen2.5-coder": FamilyRalph, "gemini-2.5-pro": FamilyRalph, "ollama": FamilyRalph,
		"omni": FamilyRalph, "": FamilyRalph, "gpt-5.0x": FamilyRalph,
	} {
		if got := FamilyOf(model); got != want {
			t.Errorf("FamilyOf(%q) = %q, want %q", model, got, want)
		}
	}
}

func TestFamilyNamed(t *testing.T) {
	t.Parallel()
	for _, f := range append(Families(), FamilyRalph) {
		if got, ok := FamilyNamed(f.Name()); !ok || got != f {
			t.Errorf("FamilyNamed(%q) = %q %v", f.Name(), got, ok)
		}
	}
	if _, ok := FamilyNamed("bash"); ok {
		t.Error("bash is no family")
	}
}

// TestWire holds which API a model gets: the Responses API for the models
// served only there and, on OpenAI's own endpoint, for the GPT-5 family
// and the o-series; chat completions elsewhere, unless configured.
func TestWire(t *testing.T) {
	t.Parallel()
	own, local, router := "https://api.openai.com/v1", "http://127.0.0.1:8080/v1", "https://openrouter.ai/api/v1"
	for _, c := range []struct{ base, model, configured, want string }{
		{own, "gpt-5-codex", "", WireResponses}, {local, "gpt-5-codex", "", WireResponses}, {local, "gpt-5.1-codex-mini", "auto", WireResponses},
		{local, "codex-mini-latest", "", WireResponses}, {local, "o3-pro", "", WireResponses}, {own, "o1-pro", "", WireResponses},
		{router, "openai/gpt-5-codex", "", WireChat},
		{own, "gpt-5", "", WireResponses}, {own, "o3", "", WireResponses}, {own, "o4-mini", "", WireResponses}, {own, "gpt-5.1", "", WireResponses},
		{local, "gpt-5", "", WireChat}, {router, "openai/gpt-5", "", WireChat},
		{own, "gpt-4o-mini", "", WireChat}, {own, "gpt-4.1", "", WireChat}, {local, "qwen2.5-coder", "", WireChat},
		{local, "qwen2.5-coder", "responses", WireResponses}, {own, "gpt-5", "chat", WireChat}, {local, "gpt-5-codex", "Chat", WireChat},
	} {
		if got := Wire(c.base, c.model, c.configured); got != c.want {
			t.Errorf("Wire(%q, %q, %q) = %q, want %q", c.base, c.model, c.configured, got, c.want)
		}
	}
}

// TestReasoningFacts holds which models reason on the Responses API,
// which effort ralph asks each for, and which search there.
func TestReasoningFacts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model   string
		reasons bool
		effort  string
		search  bool
	}{
		{"gpt-5", true, "", true}, {"gpt-5-codex", true, "", true}, {"gpt-5.1", true, "medium", true},
		{"gpt-5.2", true, "medium", true}, {"gpt-5.1-codex-max", true, "", true}, {"codex-mini-latest", true, "", false},
		{"o3", true, "", true}, {"o4-mini", true, "", true}, {"o3-pro", true, "", true},
		{"gpt-4o", false, "", false}, {"gpt-4.1", false, "", false}, {"gpt-oss-120b", false, "", false},
		{"openai/gpt-5", false, "", false}, {"omni-model", false, "", false},
	} {
		if got := Reasons(c.model); got != c.reasons {
			t.Errorf("Reasons(%q) = %v, want %v", c.model, got, c.reasons)
		}
		if got := ReasoningEffort(c.model); got != c.effort {
			t.Errorf("ReasoningEffort(%q) = %q, want %q", c.model, got, c.effort)
		}
		if got := SearchesOnResponses(c.model); got != c.search {
			t.Errorf("SearchesOnResponses(%q) = %v, want %v", c.model, got, c.search)
		}
	}
}
