package config

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// TestLSPSettings: [lsp.NAME] tables of both files merge by name (the
// project's marked FromProject), the waits parse, and a project may turn
// the servers off but not back on.
func TestLSPSettings(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	user := UserFile("/home/u/.config")
	_ = afero.WriteFile(fs, user, []byte("lsp_enabled = false\nlsp_wait = \"2s\"\n[lsp.gopls]\ncommand = \"/opt/gopls\"\nfiletypes = [\".go\"]\n[lsp.clangd]\nenabled = false\n"), 0o644)
	_ = afero.WriteFile(fs, "/p/"+ProjectFile, []byte("lsp_enabled = true\nlsp_first_wait = 20\n[lsp.mine]\ncommand = \"mine-ls\"\nargs = [\"--stdio\"]\nfiletypes = [\"zz\"]\n"), 0o644)
	c, err := Load(Sources{Fs: fs, ProjectRoot: "/p", UserConfigDir: "/home/u/.config", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if !c.LSP.Off {
		t.Error("a project's lsp_enabled = true turned the servers back on")
	}
	if w, f := c.LSP.Waits(); w != 2*time.Second || f != 20*time.Second {
		t.Errorf("waits %s, %s", w, f)
	}
	byName := map[string]LSPServer{}
	for _, s := range c.LSP.Servers {
		byName[s.Name] = s
	}
	if g := byName["gopls"]; g.Command != "/opt/gopls" || g.Filetypes[0] != "go" || g.FromProject {
		t.Errorf("gopls: %+v", g)
	}
	if !byName["clangd"].Disabled || !byName["mine"].FromProject || byName["mine"].AsMCPServer().Fingerprint() == "" {
		t.Errorf("servers: %+v", c.LSP.Servers)
	}
	if w, f := (LSP{}).Waits(); w != DefaultLSPWait || f != DefaultLSPFirstWait {
		t.Errorf("default waits %s, %s", w, f)
	}
	_ = afero.WriteFile(fs, "/p/"+ProjectFile, []byte("lsp_wait = \"1h\"\n"), 0o644)
	if _, err := Load(Sources{Fs: fs, ProjectRoot: "/p", UserConfigDir: "/home/u/.config", Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), "lsp_wait") {
		t.Errorf("a wait of an hour: %v", err)
	}
}
