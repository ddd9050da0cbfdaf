package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/rootfs"
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

// TestMarketFor: a bare name is taken from the one added marketplace that
// lists it, from the official one when it lists it among others, and is
// refused in one sentence naming every marketplace that lists it, or
// saying none does.
func TestMarketFor(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	a := MarketAdder{Person: rootfs.Person(), UserConfigDir: cfg, Now: func() time.Time { return now }}
	market := func(name, plugins string) {
		dir := filepath.Join(t.TempDir(), name)
		write(t, dir, map[string]string{".claude-plugin/marketplace.json": `{"name":"` + name + `","plugins":[` + plugins + `]}`})
		if _, _, err := a.AddMarket(context.Background(), dir, "/"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.MarketFor("x"); !errors.Is(err, ErrNoEntry) || !strings.Contains(err.Error(), "no marketplace is added") {
		t.Errorf("no marketplace: %v", err)
	}
	market("every-marketplace", `{"name":"compound-engineering","source":"./ce"},{"name":"shared","source":"./s"},{"name":"both","source":"./b"}`)
	market("other", `{"name":"shared","source":"./s"},{"name":"both","source":"./b"}`)
	market(OfficialMarket, `{"name":"both","source":"./b"}`)
	for name, want := range map[string]string{"compound-engineering": "every-marketplace", "both": OfficialMarket} {
		if got, err := a.MarketFor(name); err != nil || got != want {
			t.Errorf("MarketFor(%s) = %q, %v; want %s", name, got, err, want)
		}
	}
	_, err := a.MarketFor("shared")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "every-marketplace and other") || !strings.Contains(err.Error(), "shared@every-marketplace or shared@other") {
		t.Errorf("two marketplaces: %v", err)
	}
	if _, err := a.MarketFor("nowhere"); !errors.Is(err, ErrNoEntry) || !strings.Contains(err.Error(), "no added marketplace lists") {
		t.Errorf("none lists it: %v", err)
	}
}
