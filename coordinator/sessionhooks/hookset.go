package sessionhooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// settingsHooksNoticed marks, in the person's config directory, that ralph
// told them once that it runs the hooks of their agent settings files
// (~/.claude/settings.json).
func settingsHooksNoticed(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "claude_hooks_noticed")
}

// SourcesOf are the sources of a project's hooks.
func SourcesOf(root string, fs, person afero.Fs, cfg config.Config, plugins []Plugin) Sources {
	home, _ := os.UserHomeDir()
	return Sources{Root: root, Fs: fs, Person: person, Home: home, UserConfigDir: config.UserConfigDir(), Config: cfg, Plugins: plugins}
}

// Builder makes the session's hooks.Sets of what Load found: it holds
// what a Set needs of the session that runs it, so that the project only
// wires it.
type Builder struct {
	// Root is the project; Person the person's own directories, where
	// ralph keeps which notices it said and which hooks were approved.
	Root   string
	Person afero.Fs
	// Env is the environment the hooks run with, asked each time a Set
	// is made (childenv.ForCommands of the session's configuration now).
	Env func() []string
	// Approval asks the person about a hook that waits for approval.
	Approval *approval.Policy
	// Notify tells the person something.
	Notify func(string)
	// EnvFile is the session's environment file for a sandbox, nil for
	// none (the project's sessionenv.go).
	EnvFile func(hooks.Sandbox) *hooks.EnvFile
}

// Say tells the person, once each, what loading the hooks left out
// or ignored, that every hook is off, and, the first time ralph ever
// finds hooks in ~/.claude/settings.json, that it runs them.
func (p Builder) Say(l Loaded) {
	for _, w := range slices.Concat(l.Warnings, l.Ignored) {
		p.Notify(w)
	}
	if line := l.RulesLine(); line != "" && p.rulesLineNew(line, len(l.PermissionWarnings) > 0) {
		p.Notify(line)
	}
	if n := l.DisabledNote(); n != "" && len(l.Entries) > 0 {
		p.Notify(n)
	}
	if l.PersonSettingsHooks == 0 || l.Disabled != "" || !rootfs.IsReal(p.Person) {
		return
	}
	mark := settingsHooksNoticed(config.UserConfigDir())
	if _, err := p.Person.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		return
	}
	files := strings.Join(l.PersonSettingsFiles, " and ")
	p.Notify(fmt.Sprintf("ralph runs %s of %s as Claude Code does, in the sandbox (docs/hooks.md); "+
		"set claude_hooks = false in %s to turn them off", text.Counted(l.PersonSettingsHooks, "hook", "hooks"), files, config.UserFile("~/.config")))
	if err := p.Person.MkdirAll(filepath.Dir(mark), 0o700); err == nil {
		_ = memory.WriteFileAtomic(p.Person, mark, []byte("ralph told you it runs the hooks of "+files+"\n"), 0o600)
	}
}

// Set is the session's hooks.Set: the hooks that run, and those that
// wait for the person's approval, asked at the first hook event through
// the one approval policy. nil when there is none, so that hooks cost
// nothing then.
func (p Builder) Set(l Loaded, src Sources, sandbox hooks.Sandbox) *hooks.Set {
	return p.SetOf(l, src, sandbox, "")
}

// SetOf is Set's Set of the hooks of agent definition agent's
// front matter, or of the session's own when agent is "".
func (p Builder) SetOf(l Loaded, src Sources, sandbox hooks.Sandbox, agent string) *hooks.Set {
	entries := slices.DeleteFunc(slices.Clone(l.Entries), func(e Entry) bool { return e.Agent != agent })
	if len(entries) == 0 || l.Disabled != "" {
		return nil
	}
	s := &hooks.Set{Runner: &hooks.Runner{ProjectDir: p.Root,
		Env:     p.Env(),
		Sandbox: sandbox, If: approval.HookIfAt(p.Root)}}
	if agent == "" && p.EnvFile != nil {
		s.Runner.EnvFile = p.EnvFile(sandbox)
	}
	reviews := map[hooks.Hook]approval.ProjectHook{}
	for _, e := range entries {
		if e.Review != nil {
			reviews[e.Hook] = *e.Review
		}
		switch e.State {
		case Runs:
			s.Config.Hooks = append(s.Config.Hooks, e.Hook)
		case Waiting:
			s.Pending = append(s.Pending, e.Hook)
		}
	}
	// What was approved is what runs: a script the model rewrites in the
	// middle of the session stops the hook that runs it.
	s.Unchanged = func(h hooks.Hook) bool {
		was, ok := reviews[h]
		if !ok {
			return true
		}
		if review(src, h).Fingerprint() == was.Fingerprint() {
			return true
		}
		what := "until you approve it again it does not run"
		if h.Event == hooks.PreToolUse {
			what = "until you approve it again the calls it guards are refused"
		}
		p.Notify(fmt.Sprintf("the %s hook `%s` from %s changed since it was approved (%s); %s (`ralph hooks approve`)",
			h.Event, text.Visible(h.Command), text.Visible(h.File), strings.Join(approval.ChangedFiles(was, review(src, h)), "; "), what))
		return false
	}
	// Where nobody can be asked, the hooks that wait are said in one
	// line once they are all decided (unasked), not one line each.
	var unasked []UnaskedHook
	var nobody string
	s.Approve = func(ctx context.Context, h hooks.Hook) bool {
		d := p.Approval.ApproveHook(ctx, reviews[h])
		if d.Allowed {
			return true
		}
		if why := p.Approval.HookNobody(); why != "" && d.Unasked {
			changes := approval.HookChanges(p.Person, config.UserConfigDir(), p.Root, reviews[h])
			unasked, nobody = append(unasked, UnaskedHook{Hook: h, Changes: changes}), why
			return false
		}
		if h.Event == hooks.PreToolUse {
			p.Notify(d.Reason + "; until then the calls it guards are refused")
		} else {
			p.Notify(d.Reason + "; until then it does not run")
		}
		return false
	}
	s.Settled = func() {
		if len(unasked) > 0 {
			p.Notify(UnaskedHooks(unasked, nobody))
		}
		unasked = nil
	}
	return s
}

// UnaskedHook is a hook that waits for an approval nobody can give here,
// with what changed since the person approved it last, if they did.
type UnaskedHook struct {
	Hook    hooks.Hook
	Changes []string
}

// UnaskedHooks is the one line that says which hooks wait for an
// approval nobody can give here (nobody says why): each guard refuses
// the calls it guards, and every other does not run, until the person
// approves them with `ralph hooks approve`.
func UnaskedHooks(hs []UnaskedHook, nobody string) string {
	var what []string
	for _, u := range hs {
		h := u.Hook
		does := "does not run"
		if h.Event == hooks.PreToolUse {
			does = "refuses the calls it guards"
		}
		changed := ""
		if len(u.Changes) > 0 {
			changed = " (changed since you approved it: " + strings.Join(u.Changes, ", ") + ")"
		}
		what = append(what, fmt.Sprintf("the %s hook `%s` from %s%s %s", h.Event, text.Visible(h.Command), text.Visible(h.File), changed, does))
	}
	return fmt.Sprintf("%s for approval and %s: %s; approve %s in this project with `ralph hooks approve`",
		text.Counted(len(hs), "hook waits", "hooks wait"), nobody, strings.Join(what, "; "), text.Plural(len(hs), "it", "them"))
}

// rulesLineSaid is where ralph keeps, in the person's config directory,
// which permission lines (RulesLine) it said last, by project: a
// fingerprint per line, the most recent last.
func rulesLineSaid(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "permissions_said")
}

// maxRulesLinesKept bounds the fingerprints kept: one per project the
// person works in, the oldest dropped first.
const maxRulesLinesKept = 64

// rulesLineNew reports whether the session's start says the permission
// line: the first time, and again whenever it changes (a rule added,
// removed or now held differently), but not at every start while
// nothing changed, since a real ~/.claude/settings.json holds a dozen
// Read(…) rules and the same line each time is one the person learns to
// skip (docs/hooks.md). A line naming rules ralph cannot hold (unheld)
// is said every time: a refusal the person counts on is not held to.
// Without a real file system for the person's files it is always said.
func (p Builder) rulesLineNew(line string, unheld bool) bool {
	if unheld || !rootfs.IsReal(p.Person) {
		return true
	}
	sum := sha256.Sum256([]byte(p.Root + "\x00" + line))
	mark := hex.EncodeToString(sum[:])
	file := rulesLineSaid(config.UserConfigDir())
	var kept []string
	if data, err := afero.ReadFile(p.Person, file); err == nil {
		kept = strings.Fields(string(data))
	}
	if slices.Contains(kept, mark) {
		return false
	}
	kept = append(kept, mark)
	if len(kept) > maxRulesLinesKept {
		kept = kept[len(kept)-maxRulesLinesKept:]
	}
	if err := p.Person.MkdirAll(filepath.Dir(file), 0o700); err == nil {
		_ = memory.WriteFileAtomic(p.Person, file, []byte(strings.Join(kept, "\n")+"\n"), 0o600)
	}
	return true
}
