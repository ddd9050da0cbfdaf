package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"
)

// decodesKey reports whether a config file setting key (dotted, with
// <kind> and <name> filled in) is taken by readFile with a value of some
// type, and otherwise the error of the last try.
func decodesKey(t *testing.T, key string) (bool, error) {
	t.Helper()
	table, leaf := "", key
	if i := strings.LastIndex(key, "."); i >= 0 {
		table, leaf = key[:i], key[i+1:]
	}
	var err error
	for _, v := range []string{`"1s"`, `1`, `true`, `["x"]`, `1.5`, `{ A = "x" }`} {
		body := leaf + " = " + v + "\n"
		if table != "" {
			body = "[" + table + "]\n" + body
		}
		fs := afero.NewMemMapFs()
		if werr := afero.WriteFile(fs, "/c.toml", []byte(body), 0o600); werr != nil {
			t.Fatal(werr)
		}
		if _, _, err = readFile(fs, "/c.toml"); err == nil {
			return true, nil
		}
	}
	return false, err
}

// filled is a known key with example names in the places of its
// table-of-tables keys.
func filled(k string) string {
	return strings.NewReplacer("<kind>", "codex", "<name>", "srv").Replace(k)
}

// generalKey is key with <kind> or <name> in the place of the name of
// its agent or MCP server table.
func generalKey(key string) string {
	parts := strings.Split(key, ".")
	if len(parts) == 3 {
		switch parts[0] {
		case "agents":
			parts[1] = "<kind>"
		case "mcp_servers", "lsp":
			parts[1] = "<name>"
		}
	}
	return strings.Join(parts, ".")
}

// TestKnownKeysAreAccepted: every key the unknown-setting message lists
// is one a config file may hold, and one typo away from it is refused
// with the key it was near.
func TestKnownKeysAreAccepted(t *testing.T) {
	for _, k := range knownKeys() {
		key := filled(k)
		if ok, err := decodesKey(t, key); !ok {
			t.Errorf("listed key %s is refused: %v", key, err)
		}
		typo := key[:len(key)-1] + "Q" + key[len(key)-1:]
		_, err := decodesKey(t, typo)
		if err == nil || !strings.Contains(err.Error(), `did you mean "`+key+`"?`) {
			t.Errorf("typo %s: got %v, want a suggestion of %s", typo, err, key)
		}
	}
}

// TestAcceptedKeysAreListed: every setting docs/config.md shows, every
// agent kind and the settings this message left out before (plans_dir,
// review, answer_timeout, [engine]) are accepted and listed by the
// message.
func TestAcceptedKeysAreListed(t *testing.T) {
	saved := AgentKinds
	AgentKinds = []string{"claude", "codex", "gemini"}
	defer func() { AgentKinds = saved }()
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```toml\n(.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("docs/config.md has no toml example")
	}
	var example map[string]any
	md, err := toml.Decode(string(block[1]), &example)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range md.Keys() {
		if md.Type(k...) != "Hash" {
			keys = append(keys, k.String())
		}
	}
	keys = append(keys, "plans_dir", "review", "answer_timeout", "engine.name", "engine.address",
		"agents.gemini.model", "agents.claude.args", "mcp_servers.srv.command", "mcp_servers.srv.tool_timeout_sec")
	_, err = decodesKey(t, "no_such_setting")
	if err == nil {
		t.Fatal("an unknown setting was taken")
	}
	msg := err.Error()
	for _, key := range keys {
		if ok, err := decodesKey(t, key); !ok {
			t.Errorf("%s is refused: %v", key, err)
		}
		general := generalKey(key)
		if !slices.Contains(knownKeys(), general) {
			t.Errorf("%s is accepted but not among the known keys", key)
		}
		if !strings.HasPrefix(key, "mcp_servers.") && !strings.Contains(msg, general) {
			t.Errorf("the unknown-setting message leaves out %s: %s", key, msg)
		}
	}
	if !strings.Contains(msg, "<kind> is claude, codex, gemini") {
		t.Errorf("the message does not name the agent kinds: %s", msg)
	}
}
