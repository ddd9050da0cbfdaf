package llm

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"
)

// A model on the person's own machine or network, on a CPU, may read a
// long prompt for minutes before the first word of its answer, while a
// hosted one answers within seconds or has hung. So before the first
// byte of an answer from a local endpoint ralph waits FirstByteTimeout
// rather than IdleTimeout; and an Ollama that lists the model as loaded
// (/api/ps) is visibly working on it, so it is waited for ollamaPatience
// times as long, asked again every IdleTimeout. Once the answer has begun,
// IdleTimeout holds between its bytes, as for any server.

// ollamaPatience is how many FirstByteTimeouts ralph waits for an Ollama
// that has the model loaded: an hour by default, since nothing waits for
// ever.
const ollamaPatience = 6

// isLocal reports whether the endpoint is on this machine or its network:
// localhost, a loopback, private or link-local address, or a .local name.
func isLocal(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}

// patience is what one attempt's watchdog learnt about a local server
// that has not begun its answer.
type patience struct {
	asked   time.Duration // the silence when Ollama was last asked
	working bool          // Ollama listed the model as loaded then
}

// silenceLimit is how long the attempt may stay silent now, and whether
// the server is visibly working on it.
func (c *Client) silenceLimit(ctx context.Context, model string, slot *attemptSlot, silent time.Duration, p *patience) (time.Duration, bool) {
	if !c.local || slot.answered.Load() {
		return c.cfg.IdleTimeout, false
	}
	if d := c.served(); d != nil && silent >= c.cfg.IdleTimeout && silent-p.asked >= c.cfg.IdleTimeout {
		p.asked = silent
		_, p.working = c.loadedContext(withoutSlot(ctx), d, model)
	}
	if p.working {
		return ollamaPatience * c.cfg.FirstByteTimeout, true
	}
	return c.cfg.FirstByteTimeout, false
}
