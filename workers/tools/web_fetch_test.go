package tools

import (
	"testing"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestWebFetchFollowsTheNetworkRule: web_fetch is offered wherever the
// session has the network, read-only too (as read-only keeps the
// commands' network), and nowhere without it; it asks (an allow rule
// changes what it does) and changes no file.
func TestWebFetchFollowsTheNetworkRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode Mode
		want bool
	}{
		{Mode{Sandbox: sandbox.WorkspaceWrite, Network: true}, true},
		{Mode{Sandbox: sandbox.ReadOnly, Network: true}, true},
		{Mode{Sandbox: sandbox.WorkspaceWrite}, false},
		{Mode{Sandbox: sandbox.ReadOnly}, false},
	} {
		if got := Offered(ToolWebFetch, RoleMain, c.mode); got != c.want {
			t.Errorf("offered in %+v: %v, want %v", c.mode, got, c.want)
		}
	}
	if info := Info(ToolWebFetch); !info.Asks || !info.ReadOnly || info.WritesInProcess {
		t.Errorf("web_fetch's info %+v", info)
	}
	if Peer(ToolWebFetch).Name != "WebFetch" {
		t.Errorf("web_fetch's peer %+v", Peer(ToolWebFetch))
	}
}
