package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The same policy decides web_fetch's requests, per domain, as it decides
// commands: a domain the person allowed (web_fetch_allow in their user
// config, --allowed-tools 'WebFetch(domain:HOST)' or a bare WebFetch) is
// fetched without asking, as is every domain under --yes; one refused by
// --disallowed-tools never is; any other is asked about at each fetch,
// with the URL shown, and refused when nobody can be asked. "Always"
// allows the domain from then on, as it allows a command's program: for
// the rest of the session, and for good in web_fetch_allow of the
// person's own config, which the model's files cannot reach. It is never
// offered for the project's config, which may not hold web_fetch_allow.

// FetchRules are the domains web_fetch may and may not fetch from, from
// the person's config and the command line.
type FetchRules struct {
	// Allow are domains fetched without asking ("docs.example.org", or
	// "*.example.org" for its subdomains); AllowAll is a bare WebFetch.
	Allow    []string
	AllowAll bool
	// Deny are domains never fetched from; DenyAll is a bare WebFetch in
	// --disallowed-tools.
	Deny    []string
	DenyAll bool
}

// domainMatches reports whether rule names host: the host itself, or,
// for a rule "*.example.org", any host under example.org.
func domainMatches(rule, host string) bool {
	rule = normalHost(rule)
	if sub, ok := strings.CutPrefix(rule, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	return rule == host
}

// normalHost is a host name as rules compare it: lower case, without the
// root's trailing dot.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// ApproveFetch implements tools.FetchApprover: host is the domain about
// to be fetched from (the first request's or a redirect's), rawURL the
// whole URL, shown to the person.
func (p *Policy) ApproveFetch(ctx context.Context, host, rawURL string) tools.Decision {
	host = normalHost(host)
	// Deny, DenyAll and AllowAll never change after New; Allow grows
	// with "always" (fetchAllowed).
	if p.fetch.DenyAll || slices.ContainsFunc(p.fetch.Deny, func(d string) bool { return domainMatches(d, host) }) {
		return tools.Decision{Reason: fmt.Sprintf("a deny rule (--disallowed-tools or permissions.deny) refuses fetching from %s", text.Visible(host))}
	}
	if p.yes || p.fetch.AllowAll || p.fetchAllowed(host) {
		return tools.Decision{Allowed: true}
	}
	hint := fmt.Sprintf("the user can allow it with --allowed-tools 'WebFetch(domain:%s)', --yes, or web_fetch_allow = [%q] in their user config", text.Visible(host), text.Visible(host))
	asker := p.currentAsker()
	if asker == nil {
		return tools.Decision{Reason: fmt.Sprintf("fetching from %s needs approval and %s; %s", text.Visible(host), p.nobodyAsked(), hint), Unasked: true}
	}
	args, _ := json.Marshal(map[string]string{"url": rawURL})
	q := Question{MCP: &MCPCall{Tool: tools.ToolWebFetch, Name: tools.ToolWebFetch, Args: string(args)}, Domain: host, Remember: []string{host}}
	// An "always" for this domain answered while this question waited
	// for its turn allows it without asking again.
	ans, err := p.ask(ctx, asker, func() (Question, bool) { return q, p.fetchAllowed(host) }, func(ans Answer) {
		if ans == Always {
			p.rememberDomain(asker, host)
		}
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: fmt.Sprintf("no answer to the approval question (%v); %s", err, hint), Unasked: true}
	case !ans.Refused():
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined("the user declined fetching from "+text.Visible(host), ans)}
}

// fetchAllowed reports whether an allow rule, or an "always" answered in
// this session, names host.
func (p *Policy) fetchAllowed(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.fetch.Allow, func(d string) bool { return domainMatches(d, host) })
}

// rememberDomain allows host for the rest of the session and saves it in
// web_fetch_allow of the person's own config, telling the person where
// (or why not) when the asker can show a notice.
func (p *Policy) rememberDomain(asker Asker, host string) {
	p.mu.Lock()
	if !slices.Contains(p.fetch.Allow, host) {
		p.fetch.Allow = append(p.fetch.Allow, host)
	}
	p.mu.Unlock()
	note := noter(asker)
	if p.fs == nil || p.redactor.Contains(host) {
		note("fetching from "+text.Visible(host)+" allowed until ralph exits", false)
		return
	}
	if err := saveUserEntry(p.user, p.userDir, webFetchAllow, host); err != nil {
		note(fmt.Sprintf("could not save %s (%v); fetching from it allowed until ralph exits", text.Visible(host), err), true)
		return
	}
	note("fetching from "+text.Visible(host)+" allowed from now on (web_fetch_allow in "+config.UserFile(p.userDir)+")", false)
}

var _ tools.FetchApprover = (*Policy)(nil)
