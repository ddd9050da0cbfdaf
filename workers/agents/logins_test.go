package agents

import (
	"slices"
	"testing"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// TestEveryAgentHidesItsLogin: each CLI ralph drives names where it keeps
// the person's login, and the sandbox hides it.
func TestEveryAgentHidesItsLogin(t *testing.T) {
	for _, c := range clis {
		logins := c.logins()
		if len(logins) == 0 {
			t.Errorf("%s names no login to hide", c.kind())
		}
		for _, l := range logins {
			if !slices.Contains(sandbox.AgentLogins, l) {
				t.Errorf("%s's login %+v is not hidden", c.kind(), l)
			}
		}
	}
}
