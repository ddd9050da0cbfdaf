package cli

import (
	"strings"
	"testing"
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
