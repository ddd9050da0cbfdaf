package approval

import (
	"strings"
	"testing"
)

// A page shows a question's answers as buttons: its Plain text and
// PlainHelp name no key a terminal takes, and say what Text and Help say
// otherwise, naming the buttons; Text keeps the keys.
func TestPlainNamesButtonsNotKeys(t *testing.T) {
	t.Parallel()
	for name, q := range map[string]Question{
		"always":     {Command: "make [a] test", Remember: []string{"make"}},
		"brief":      {Command: "make", Remember: []string{"make"}, Brief: true},
		"never":      {Command: "ls > /x", Why: []string{"it writes outside"}},
		"lines":      {Command: "echo a\necho b", Remember: []string{"echo"}},
		"unsandbox":  {Command: "make", Unsandboxed: true},
		"tool":       {Tool: "write_file", Command: "go.mod", Why: []string{"a protected file"}},
		"mcp":        {MCP: &MCPCall{Name: "mcp__s__t", Server: "s", Tool: "t", Args: `{}`}, Remember: []string{"mcp__s__t"}},
		"web domain": {MCP: &MCPCall{Name: "web_fetch", Tool: "web_fetch", Args: `{}`}, Remember: []string{"x"}, Domain: "example.org"},
	} {
		plain, text := q.Plain(), q.Text()
		if !strings.Contains(text, "[y]es") {
			t.Errorf("%s: Text lost its keys: %q", name, text)
		}
		// The command's own "[a]" is the command's, and stays.
		rest := strings.ReplaceAll(plain, "make [a] test", "")
		for _, key := range []string{"[y]", "[n]", "[t]", "[a]", "[p]", HelpKey + " explains"} {
			if strings.Contains(rest, key) || strings.Contains(q.PlainHelp(), key) {
				t.Errorf("%s: the plain question names the key %q:\n%s\n%s", name, key, plain, q.PlainHelp())
			}
		}
		first, _, _ := strings.Cut(text, "?")
		if !strings.HasPrefix(plain, first+"?") {
			t.Errorf("%s: the plain question does not ask what Text asks:\n%s\n%s", name, plain, text)
		}
		if q.CanAlways() && !strings.Contains(plain, "“"+ButtonAlways+"”") {
			t.Errorf("%s: the plain question does not name the %q button:\n%s", name, ButtonAlways, plain)
		}
	}
}
