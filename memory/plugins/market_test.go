package plugins

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestSplitRef: NAME@MARKETPLACE, and what is not one.
func TestSplitRef(t *testing.T) {
	for in, ok := range map[string]bool{"python-development@claude-code-workflows": true, "a@b": true, "a@": false, "@b": false, "a": false, "a/b@c": false} {
		if _, _, got := SplitRef(in); got != ok {
			t.Errorf("SplitRef(%q) = %v, want %v", in, got, ok)
		}
	}
}

// TestEntrySourceForms: a source leading out of the marketplace and the
// forms ralph does not install are refused as ErrUnsupported.
func TestEntrySourceForms(t *testing.T) {
	for _, src := range []string{`"../x"`, `"/etc"`, `{"source":"npm","package":"p"}`, `{"source":"git-subdir","url":"https://x/y.git","path":"p"}`, `{"source":"github","repo":"-bad"}`} {
		e := Entry{Name: "p", Source: json.RawMessage(src)}
		rel, _, err := entrySource(e)
		if err == nil {
			_, err = relativeDir(MarketRecord{Name: "m", Dir: t.TempDir()}, Market{}, e, rel)
		}
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("source %s: %v, want ErrUnsupported", src, err)
		}
	}
}

// TestStoreDir: the plugin store follows XDG_DATA_HOME, else the home.
func TestStoreDir(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	if got := StoreDir(func(k string) string { return env[k] }); got != "/h/.local/share/ralph/plugins" {
		t.Errorf("StoreDir = %q", got)
	}
	env["XDG_DATA_HOME"] = "/d"
	if got := StoreDir(func(k string) string { return env[k] }); got != "/d/ralph/plugins" {
		t.Errorf("StoreDir = %q", got)
	}
}
