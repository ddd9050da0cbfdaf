package providers

import (
	"slices"
	"testing"
)

func TestTheTable(t *testing.T) {
	if got := KeyVariables(); !slices.Equal(got, []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "OPENROUTER_API_KEY"}) {
		t.Errorf("KeyVariables = %q", got)
	}
	if p, ok := Named("Anthropic"); !ok || p.Protocol != ProtocolAnthropic || p.Title() != "Anthropic" {
		t.Errorf("Named(Anthropic) = %+v %v", p, ok)
	}
	if _, ok := Named("bedrock"); ok {
		t.Error("bedrock is no provider of the table")
	}
	for model, want := range map[string]string{"claude-opus-4-1": "anthropic", "Gemini-2.5-pro": "gemini", "gpt-4o": "", "anthropic/claude-sonnet-4.5": ""} {
		p, _ := ForModel(model)
		if p.Name != want {
			t.Errorf("ForModel(%q) = %q, want %q", model, p.Name, want)
		}
	}
	for _, c := range []struct{ provider, alias, want string }{
		{"anthropic", "sonnet", "claude-sonnet-4-5"}, {"anthropic", "Opus", "claude-opus-4-1"}, {"anthropic", "haiku", "claude-haiku-4-5"},
		{"openrouter", "sonnet", "anthropic/claude-sonnet-4.5"}, {"openai", "sonnet", ""}, {"", "haiku", ""}, {"anthropic", "inherit", ""},
	} {
		if got, ok := ModelForAlias(c.provider, c.alias); got != c.want || ok != (c.want != "") {
			t.Errorf("ModelForAlias(%q, %q) = %q %v, want %q", c.provider, c.alias, got, ok, c.want)
		}
	}
}

func TestEditsWithPatch(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]bool{
		"gpt-5": true, "gpt-5-codex": true, "GPT-5.1-mini": true, "codex-mini-latest": true, "o3": true, "o4-mini": true,
		"openai/gpt-5": true, "gpt-4o-mini": false, "gpt-4.1": false, "claude-sonnet-4-5": false, "ollama": false, "qwen2.5-coder": false, "": false,
	} {
		if got := EditsWithPatch(model); got != want {
			t.Errorf("EditsWithPatch(%q) = %v, want %v", model, got, want)
		}
	}
}
