package approval

import (
	"context"
	"strings"
	"testing"
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
	// A person is asked, with the URL shown, and "always" is not offered.
	a := &scriptedAsker{answers: []Answer{Yes, No}}
	p.SetAsker(a)
	if d := p.ApproveFetch(ctx, "example.org", "https://example.org/a"); !d.Allowed {
		t.Errorf("a yes: %+v", d)
	}
	if d := p.ApproveFetch(ctx, "example.org", "https://example.org/b"); d.Allowed {
		t.Errorf("a no: %+v", d)
	}
	if len(a.asked) != 2 || a.asked[0].CanAlways() || !strings.Contains(a.asked[0].Text(), "https://example.org/a") {
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
