package approval

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/config"
)

func TestApproveFetchPerDomain(t *testing.T) {
	t.Parallel()
	rules, err := ParseToolRules([]string{"WebFetch(domain:docs.example.org)"}, []string{"WebFetch(domain:evil.example)"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Tools: rules, Fetch: FetchRules{Allow: []string{"*.go.dev"}}})
	ctx := context.Background()
	for host, allowed := range map[string]bool{"docs.example.org": true, "DOCS.example.org.": true, "pkg.go.dev": true,
		"go.dev": false, "example.org": false, "evil.example": false} {
		if d := p.ApproveFetch(ctx, host, "https://"+host+"/"); d.Allowed != allowed {
			t.Errorf("%s: %+v, want allowed %v", host, d, allowed)
		}
	}
	// Nobody to ask: refused in one sentence that says how to allow it.
	d := p.ApproveFetch(ctx, "example.org", "https://example.org/")
	if !d.Unasked || !strings.Contains(d.Reason, "WebFetch(domain:example.org)") || !strings.Contains(d.Reason, "web_fetch_allow") {
		t.Errorf("unasked refusal: %+v", d)
	}
	// A person is asked, with the URL shown; "always" is offered for the
	// domain, in the person's own config only.
	a := &scriptedAsker{answers: []Answer{Yes, No}}
	p.SetAsker(a)
	if d := p.ApproveFetch(ctx, "example.org", "https://example.org/a"); !d.Allowed {
		t.Errorf("a yes: %+v", d)
	}
	if d := p.ApproveFetch(ctx, "example.org", "https://example.org/b"); d.Allowed {
		t.Errorf("a no: %+v", d)
	}
	if len(a.asked) != 2 || !a.asked[0].CanAlways() || a.asked[0].CanShare() || !strings.Contains(a.asked[0].Text(), "https://example.org/a") ||
		!strings.Contains(a.asked[0].Text(), "[a]lways fetches from example.org") {
		t.Errorf("questions: %+v", a.asked)
	}
	// The deny rule holds under --yes; --yes allows the rest.
	y := New(Options{Tools: rules, Yes: true})
	if y.ApproveFetch(ctx, "evil.example", "https://evil.example/").Allowed || !y.ApproveFetch(ctx, "example.org", "https://example.org/").Allowed {
		t.Errorf("--yes with a deny rule decided wrongly")
	}
	if _, err := ParseToolRules([]string{"WebFetch(https://x.org)"}, nil); err == nil {
		t.Errorf("WebFetch(https://x.org) parsed")
	}
	if r, err := ParseToolRules([]string{"WebFetch"}, nil); err != nil || !r.Fetch.AllowAll {
		t.Errorf("bare WebFetch: %+v %v", r.Fetch, err)
	}
}

// TestApproveFetchAlways: "always" for a domain allows it for the rest of
// the session without asking, saves it in web_fetch_allow of the person's
// own config (a new policy, as the next session has, reads it back), and
// allows no other domain; a project answer is not taken.
func TestApproveFetchAlways(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	userDir := "/home/me/.config/ralph"
	if err := afero.WriteFile(fs, config.UserFile(userDir), []byte("model = \"m\"\nweb_fetch_allow = [\"go.dev\"]\n\n[mcp_servers.x]\ncommand = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := New(Options{Fs: fs, Root: "/project", UserConfigDir: userDir})
	a := &scriptedAsker{answers: []Answer{Always, No}}
	p.SetAsker(a)
	ctx := context.Background()
	if d := p.ApproveFetch(ctx, "Docs.Example.org", "https://docs.example.org/a"); !d.Allowed {
		t.Fatalf("always: %+v", d)
	}
	if d := p.ApproveFetch(ctx, "docs.example.org", "https://docs.example.org/b"); !d.Allowed || len(a.asked) != 1 {
		t.Errorf("the same domain after always: %+v, %d questions", d, len(a.asked))
	}
	if d := p.ApproveFetch(ctx, "other.example.org", "https://other.example.org/"); d.Allowed || len(a.asked) != 2 {
		t.Errorf("another domain after always: %+v, %d questions", d, len(a.asked))
	}
	if _, ok := a.asked[0].Parse("p"); ok {
		t.Errorf("a web domain took the project's always")
	}
	data, err := afero.ReadFile(fs, config.UserFile(userDir))
	if err != nil || !strings.Contains(string(data), `web_fetch_allow = ["go.dev", "docs.example.org"]`) || !strings.Contains(string(data), "[mcp_servers.x]") {
		t.Errorf("the user config after always: %q %v", data, err)
	}
	if len(a.notes) != 1 || !strings.Contains(a.notes[0], "web_fetch_allow") {
		t.Errorf("notes: %q", a.notes)
	}
	var f config.File
	if _, err := toml.Decode(string(data), &f); err != nil || !slices.Equal(f.WebFetchAllow, []string{"go.dev", "docs.example.org"}) {
		t.Errorf("the saved config reads back as %+v, %v", f.WebFetchAllow, err)
	}
}
