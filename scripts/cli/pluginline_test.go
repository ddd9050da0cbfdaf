package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginLine: chat's /plugin goes through ralph plugin's own
// commands: Claude Code's install and uninstall, /plugin alone as list,
// the next-session line after a change, and bad input as one sentence
// naming the words it takes.
func TestPluginLine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".data"))
	root := t.TempDir()
	dir := testPlugin(t, filepath.Join(t.TempDir(), "guard"))
	line := PluginLine(root)
	run := func(args string) (string, error) {
		var out bytes.Buffer
		err := line(args, &out)
		return out.String(), err
	}
	out, err := run("install " + dir)
	if err != nil || !strings.Contains(out, "Added plugin guard 2.0.0") || !strings.Contains(out, "takes effect when ralph starts again") {
		t.Fatalf("install: %q, %v", out, err)
	}
	if out, err = run(""); err != nil || !strings.HasPrefix(out, "guard 2.0.0  "+dir) {
		t.Errorf("/plugin alone: %q, %v", out, err)
	}
	if out, err = run("marketplace list"); err != nil || !strings.Contains(out, "No marketplaces added") || strings.Contains(out, "takes effect") {
		t.Errorf("marketplace list: %q, %v", out, err)
	}
	for args, want := range map[string]string{
		"uninstall":        "usage: /plugin uninstall NAME (accepts 1 arg(s), received 0)",
		"frob":             "/plugin takes install NAME@MARKETPLACE|PATH, uninstall NAME, list",
		"disable guard":    "ralph does not disable plugins",
		"uninstall nobody": "no plugin named nobody is added",
		"install 'x":       "/plugin cannot read",
	} {
		if _, err := run(args); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("/plugin %s: %v, want one line with %q", args, err, want)
		}
	}
	if out, err = run("uninstall guard"); err != nil || !strings.Contains(out, "Removed plugin guard") {
		t.Errorf("uninstall: %q, %v", out, err)
	}
}
