package doctor

import (
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/config"
)

// TestHideKeys checks that what a server echoes of a refused key, masked
// or whole, is not shown.
func TestHideKeys(t *testing.T) {
	for _, s := range []string{
		"Incorrect API key provided: sk-proj-****************abcd. You can find your API key at the dashboard",
		"bad key sk-1234567890abcdef",
	} {
		got := hideKeys(s)
		if strings.Contains(got, "abcd") || !strings.Contains(got, "[key hidden]") {
			t.Errorf("hideKeys(%q) = %q", s, got)
		}
	}
	if s := "key from env MY_KEY (api_key_env in ~/.config/ralph/config.toml), key-value"; hideKeys(s) != s {
		t.Errorf("hideKeys changed a sentence without a key: %q", hideKeys(s))
	}
}

// The provider line says the provider, its protocol, the key's variable
// (a bearer token's as such) and why, and never the key.
func TestProviderCheck(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.Config
		want string
	}{
		{config.Config{Provider: "anthropic", Protocol: "anthropic", APIKeyEnv: "ANTHROPIC_AUTH_TOKEN", APIKey: "tok-secret", Bearer: true, ProviderWhy: "only ANTHROPIC_AUTH_TOKEN is set"},
			"anthropic (Anthropic's Messages API), bearer token from ANTHROPIC_AUTH_TOKEN: only ANTHROPIC_AUTH_TOKEN is set"},
		{config.Config{BaseURL: "http://localhost:4000/v1", Protocol: "openai", APIKeyEnv: "OPENAI_API_KEY", ProviderWhy: "OPENAI_BASE_URL is set, so ralph keeps to that endpoint"},
			"the endpoint http://localhost:4000/v1 (OpenAI's chat completions), OPENAI_API_KEY not set: OPENAI_BASE_URL is set, so ralph keeps to that endpoint"},
	} {
		ch := providerCheck(tc.cfg)
		if ch.Name != "provider" || ch.Status != StatusOK || ch.Detail != tc.want || strings.Contains(ch.Detail, "secret") {
			t.Errorf("%+v, want detail %q", ch, tc.want)
		}
	}
}

// TestEndpointFixNamesTheProvidersVariable: the fix for an endpoint that
// failed names the variable that moves that provider's endpoint, as the
// provider table has it, not OpenAI's for every provider.
func TestEndpointFixNamesTheProvidersVariable(t *testing.T) {
	t.Parallel()
	for provider, want := range map[string]string{"anthropic": "ANTHROPIC_BASE_URL", "": "OPENAI_BASE_URL", "openai": "OPENAI_BASE_URL"} {
		if got := endpointFix(errors.New("refused"), config.Config{Provider: provider}); !strings.Contains(got, "(or "+want+")") {
			t.Errorf("%q: %s", provider, got)
		}
	}
}

// TestLSPChecksListServersWithoutRunningThem: doctor names each built-in
// and configured language server with what it found on PATH; a
// configured one that is missing is a warning, lsp_enabled = false one
// line.
func TestLSPChecksListServersWithoutRunningThem(t *testing.T) {
	t.Parallel()
	cfg := config.Config{LSP: config.LSP{Servers: []config.LSPServer{
		{Name: "mine", Command: "no-such-language-server-here", Filetypes: []string{"zz"}, Source: "/u/config.toml"},
		{Name: "clangd", Disabled: true, Source: "/u/config.toml"},
	}}}
	got := lspChecks(cfg)
	var mine, clangd, gopls bool
	for _, c := range got {
		switch c.Name {
		case "lsp mine":
			mine = c.Status == StatusWarning && strings.Contains(c.Detail, ".zz files get no diagnostics")
		case "lsp clangd":
			clangd = strings.Contains(c.Detail, "turned off")
		case "lsp gopls":
			gopls = strings.Contains(c.Detail, ".go")
		}
	}
	if !mine || !clangd || !gopls {
		t.Fatalf("checks: %+v", got)
	}
	if off := lspChecks(config.Config{LSP: config.LSP{Off: true}}); len(off) != 1 || !strings.Contains(off[0].Detail, "lsp_enabled = false") {
		t.Fatalf("off: %+v", off)
	}
}
