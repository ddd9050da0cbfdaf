package remote

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/config"
)

// Session is the session's settings a run's starter carries to its
// workers (ralph run --engine temporal -m ... -s ...), beside the loop's
// (Start.Run). Which flag travels here, and which is refused before the
// run starts, is scripts' settings table; what a worker takes of it is
// Tighten. Nothing in it is a secret: it is part of the workflow's
// history, which Temporal keeps as plain text. The zero value changes
// nothing.
type Session struct {
	// Model is --model: the model the worker's endpoint answers with.
	Model string `json:"model,omitempty"`
	// BaseURL is --base-url: the endpoint, taken only when it is the
	// worker's own or one its [engine] allow_base_urls names.
	BaseURL string `json:"base_url,omitempty"`
	// Provider is --provider: taken only where the worker's own config
	// names no endpoint of its own (no base_url, OPENAI_BASE_URL or
	// api_key_env); the worker then calls that provider's own endpoint
	// with the key in its own environment.
	Provider string `json:"provider,omitempty"`
	// ThinkingTokens is --thinking-tokens: taken when no higher than the
	// worker's own budget, if it has one.
	ThinkingTokens int `json:"thinking_tokens,omitempty"`
	// Sandbox is --sandbox: taken only when it is as strict as the
	// worker's own, or stricter.
	Sandbox string `json:"sandbox,omitempty"`
	// NoNetwork is --no-network.
	NoNetwork bool `json:"no_network,omitempty"`
	// The limits (--max-turns, --max-retries, --command-timeout,
	// --idle-timeout, --max-output-tokens), each taken only when it is
	// no higher than the worker's own. Zero (MaxRetries nil) leaves the
	// worker's.
	MaxTurns        int           `json:"max_turns,omitempty"`
	MaxRetries      *int          `json:"max_retries,omitempty"`
	CommandTimeout  time.Duration `json:"command_timeout,omitempty"`
	IdleTimeout     time.Duration `json:"idle_timeout,omitempty"`
	MaxOutputTokens int           `json:"max_output_tokens,omitempty"`
	// Yes is -y: commands the sandbox contains run unasked. Without it a
	// worker, where nobody can be asked, refuses every command no
	// approval rule allows.
	Yes bool `json:"yes,omitempty"`
	// DisallowedTools are --disallowed-tools: tools refused.
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	// AppendSystem is --append-system-prompt.
	AppendSystem string `json:"append_system,omitempty"`
}

// ErrLoosens marks a carried setting a worker refuses because it would
// give the run more than the worker's own configuration does. Such an
// error matches config.ErrInvalid too: bad input, exit 2.
var ErrLoosens = errors.New("a run's settings may only tighten the worker's own")

// loosening is a refused setting: its sentence, and nothing else.
type loosening struct{ msg string }

func (e loosening) Error() string { return e.msg }
func (e loosening) Is(target error) bool {
	return target == ErrLoosens || target == config.ErrInvalid
}

// loosens is the one sentence a worker refuses a carried setting with.
func loosens(format string, a ...any) error {
	return loosening{fmt.Sprintf(format, a...)}
}

// Tighten puts the carried settings over a worker's configuration cfg,
// each only where it tightens what cfg allows: a stricter sandbox, no
// network, lower limits, the worker's own endpoint or one it allows. A
// setting that would loosen cfg is refused in one sentence matching
// ErrLoosens (and config.ErrInvalid), and cfg is then left as it was: a
// workflow's starter must not loosen a worker's sandbox nor send the
// worker's API key to a URL of their choosing.
func (s Session) Tighten(cfg *config.Config) error {
	c := *cfg
	c.Apply(config.ModelSetting, s.Model, config.FromRun)
	if s.BaseURL != "" && !config.SameEndpoint(s.BaseURL, c.BaseURL) {
		if !slices.ContainsFunc(c.Engine.AllowBaseURLs, func(u string) bool { return config.SameEndpoint(s.BaseURL, u) }) {
			host := s.BaseURL
			if u, err := url.Parse(s.BaseURL); err == nil && u.Host != "" {
				host = u.Host
			}
			return loosens("the run's --base-url points at %s, which this worker's config does not allow (add it to [engine] allow_base_urls in the worker's ~/.config/ralph/config.toml)", host)
		}
		c.Apply(config.BaseURLSetting, s.BaseURL, config.FromRun)
	}
	if s.Provider != "" && !strings.EqualFold(s.Provider, c.Provider) {
		if c.NamesEndpoint() {
			return loosens("the run's --provider %s would send this worker's key to the endpoint its own config names for %s; name the provider in the worker's ~/.config/ralph/config.toml instead", s.Provider, c.BaseURL)
		}
		c.Apply(config.ProviderSetting, s.Provider, config.FromRun)
	}
	if s.ThinkingTokens != 0 {
		if c.ThinkingTokens != 0 && s.ThinkingTokens > c.ThinkingTokens {
			return loosens("the run's --thinking-tokens %d is higher than this worker's own %d", s.ThinkingTokens, c.ThinkingTokens)
		}
		c.ThinkingTokens = s.ThinkingTokens
	}
	if s.Sandbox != "" {
		if config.Looser(s.Sandbox, c.Sandbox) {
			return loosens("the run's --sandbox %s gives the model's commands more than this worker's sandbox %s", s.Sandbox, sandboxName(c.Sandbox))
		}
		c.Sandbox = s.Sandbox
	}
	if s.NoNetwork {
		c.Network = false
	}
	for _, l := range []struct {
		name      string
		give, own int64
		show      func(int64) string
		set       func(int64)
	}{
		{"--max-turns", int64(s.MaxTurns), int64(c.MaxTurns), count, func(v int64) { c.MaxTurns = int(v) }},
		{"--command-timeout", int64(s.CommandTimeout), int64(c.CommandTimeout), span, func(v int64) { c.CommandTimeout = time.Duration(v) }},
		{"--idle-timeout", int64(s.IdleTimeout), int64(c.IdleTimeout), span, func(v int64) { c.IdleTimeout = time.Duration(v) }},
	} {
		if l.give == 0 {
			continue
		}
		if l.give > l.own {
			return loosens("the run's %s %s is higher than this worker's own %s", l.name, l.show(l.give), l.show(l.own))
		}
		l.set(l.give)
	}
	if s.MaxRetries != nil {
		if *s.MaxRetries > c.MaxRetries {
			return loosens("the run's --max-retries %d is higher than this worker's own %d", *s.MaxRetries, c.MaxRetries)
		}
		c.MaxRetries = *s.MaxRetries
	}
	if s.MaxOutputTokens != 0 {
		if c.MaxOutputTokens != 0 && s.MaxOutputTokens > c.MaxOutputTokens {
			return loosens("the run's --max-output-tokens %d is higher than this worker's own %d", s.MaxOutputTokens, c.MaxOutputTokens)
		}
		c.MaxOutputTokens = s.MaxOutputTokens
	}
	*cfg = c
	return nil
}

func count(v int64) string { return fmt.Sprint(v) }
func span(v int64) string  { return time.Duration(v).String() }

func sandboxName(mode string) string {
	if mode == "" {
		return config.DefaultSandbox
	}
	return mode
}

// RefusedRun is the sentence why a worker refuses a run configuration
// that would loosen it, nil when it may work it. An --agent-arg could
// undo the sandbox ralph matches a CLI agent to, and an exec: agent runs
// a command of the starter's choosing outside the sandbox; both belong in
// the worker's own config. Remote.Refused says the same before a run
// starts; the worker checks again, since anyone who may start a workflow
// on its task queue chooses its input.
func RefusedRun(agent string, agentArgs []string) error {
	switch {
	case len(agentArgs) > 0:
		return loosens("--agent-arg does not travel to a worker: an argument could undo the sandbox the worker matches its agent to; set it in the worker's own [agents.<kind>] args")
	case strings.HasPrefix(agent, "exec:"):
		return loosens("--agent %s does not travel to a worker: an exec: agent runs a command of the run's choosing outside the worker's sandbox", agent)
	}
	return nil
}
