package config

import (
	"slices"
	"testing"

	"github.com/spf13/afero"
)

// TestFileKeys checks the keys a file is reported to set: leaves as
// dotted keys, an MCP server as one key, nothing for a missing file.
func TestFileKeys(t *testing.T) {
	fs := afero.NewMemMapFs()
	text := "model = \"m\"\n[retention]\nkeep = 2\n[agents.x]\nmodel = \"y\"\n[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"a\"]\n[mcp_servers.gh.env]\nK = \"v\"\n"
	if err := afero.WriteFile(fs, "/c.toml", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	keys, err := FileKeys(fs, "/c.toml")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"agents.x.model", "mcp_servers.gh", "model", "retention.keep"}; !slices.Equal(keys, want) {
		t.Errorf("FileKeys = %q, want %q", keys, want)
	}
	if keys, err := FileKeys(fs, "/none.toml"); err != nil || keys != nil {
		t.Errorf("a missing file: %q, %v", keys, err)
	}
}
