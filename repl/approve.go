package repl

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
)

// Approver approves run_command in chat: through the shell's own prompt
// (only the shell reads the terminal), with "always" remembered in the
// project's .ralph/config.toml as allowed_commands. What "always" remembers
// is each simple command's first word, or its first two for launchers such
// as `go test` or `npm run` (config.CommandPrefixes). Create it before the
// project is opened, then Configure and Attach it.
type Approver struct {
	yes bool

	mu      sync.Mutex
	fs      afero.Fs
	root    string
	allowed []string
	shell   asker
	// redact says which prefixes hold a secret; those are allowed for
	// this process only, never saved (set before use).
	redact *memory.Redactor
}

// asker is what the approver needs of the shell: a question answered by
// the user's next line, and a place for a notice.
type asker interface {
	Ask(ctx context.Context, question, prompt, what string) (string, bool)
	note(text string, bad bool)
}

// NewApprover returns an approver; yes approves everything (--yes).
func NewApprover(yes bool) *Approver { return &Approver{yes: yes} }

// Configure says where "always" is saved and what is allowed already.
func (a *Approver) Configure(fs afero.Fs, root string, allowed []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fs, a.root, a.allowed = fs, root, append([]string(nil), allowed...)
}

// Attach routes questions to the shell.
func (a *Approver) Attach(s *Shell) { a.attach(s) }

func (a *Approver) attach(s asker) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.shell = s
}

// ApproveCommand implements workers.Approver.
func (a *Approver) ApproveCommand(ctx context.Context, command string) workers.Decision {
	if a.yes {
		return workers.Decision{Allowed: true}
	}
	a.mu.Lock()
	ok, sh := config.PrefixesAllowed(a.allowed, command), a.shell
	a.mu.Unlock()
	if ok {
		return workers.Decision{Allowed: true}
	}
	if sh == nil {
		return workers.DenyNoTerminal.ApproveCommand(ctx, command)
	}
	prefixes, canAlways := config.CommandPrefixes(command)
	question := fmt.Sprintf("run `%s`? [y]es / [n]o / [a]lways", strings.TrimSpace(command))
	prompt := "allow? y/n/a ›"
	if canAlways {
		question += " (always allows " + quoteAll(prefixes) + " from now on, saved in .ralph/config.toml)"
	} else {
		question = fmt.Sprintf("run `%s`? [y]es / [n]o (it runs substituted commands, so it is asked about every time)", strings.TrimSpace(command))
		prompt = "allow? y/n ›"
	}
	what := "to run `" + clipWidth(strings.Join(strings.Fields(command), " "), 60) + "`"
	for {
		answer, got := sh.Ask(ctx, question, prompt, what)
		if !got {
			return workers.Decision{Reason: "cancelled: the user stopped the work before answering whether to run this command"}
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return workers.Decision{Allowed: true}
		case "n", "no":
			return workers.Decision{Reason: "the user declined to run this command"}
		case "a", "always":
			if canAlways {
				a.always(sh, prefixes)
				return workers.Decision{Allowed: true}
			}
		}
		question = "please answer y (yes), n (no)" + map[bool]string{true: " or a (always)", false: ""}[canAlways]
	}
}

// always remembers prefixes for this process and in the project's config.
func (a *Approver) always(sh asker, prefixes []string) {
	a.mu.Lock()
	a.allowed = append(a.allowed, prefixes...)
	fs, root := a.fs, a.root
	a.mu.Unlock()
	if fs == nil {
		return
	}
	for _, p := range prefixes {
		if a.redact.Contains(p) {
			sh.note("not saved: the approval holds your API key, so it holds until you leave", true)
			return
		}
		if err := config.AllowCommand(fs, root, p); err != nil {
			sh.note(fmt.Sprintf("could not save the approval of `%s` (%v); it holds until you leave", p, err), true)
			return
		}
	}
	sh.note("allowed from now on: "+quoteAll(prefixes)+" (allowed_commands in .ralph/config.toml)", false)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, ", ")
}
