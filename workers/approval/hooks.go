package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// A project's hook (.claude/settings.json, .claude/settings.local.json,
// [[hooks.EVENT]] in .ralph/config.toml) or a plugin's is approved as a
// project's MCP server is: by content, on this machine, in the same
// record. What a hook runs is its command and the files the command
// names (a script under the project the model may rewrite), so the
// approval's fingerprint covers the command and the content of each of
// those files: the model editing the script asks again.

// hookEntryPrefix starts a hook's entry in the approval record; no rule
// can be one.
const hookEntryPrefix = "hook "

// ProjectHook is a hook a person must approve before it runs, as they are
// shown it.
type ProjectHook struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	// Source is the settings file that holds it, relative to the project
	// root when it is inside.
	Source string `json:"source"`
	// PluginRoot is the plugin's directory, for a plugin's hook.
	PluginRoot string `json:"plugin_root,omitempty"`
	// Files are the files its command names, each with the digest of its
	// content ("" for one that cannot be read).
	Files []HookFile `json:"files,omitempty"`
}

// HookFile is one file a hook's command names.
type HookFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Fingerprint identifies what the hook runs: its event, matcher, command
// and file, and the content of every file its command names.
func (h ProjectHook) Fingerprint() string {
	data, _ := json.Marshal(h)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// key identifies the hook across changes of the files it names, for
// showing what changed: its file, event, matcher and command.
func (h ProjectHook) key() string {
	return h.Source + "\x00" + h.Event + "\x00" + h.Matcher + "\x00" + h.Command
}

func hookEntry(h ProjectHook) string { return hookEntryPrefix + h.Fingerprint() }

// Shown is the hook as a person reads it, one line per field.
func (h ProjectHook) Shown() []string {
	out := []string{"event: " + text.Visible(h.Event)}
	if h.Matcher != "" {
		out = append(out, "matcher: "+text.Visible(h.Matcher))
	}
	out = append(out, "command: "+text.Visible(h.Command), "from: "+text.Visible(h.Source))
	if h.PluginRoot != "" {
		out = append(out, "plugin: "+text.Visible(h.PluginRoot))
	}
	for _, f := range h.Files {
		d := f.SHA256
		if d == "" {
			d = "unreadable"
		} else if len(d) > 12 {
			d = d[:12]
		}
		out = append(out, "runs file: "+text.Visible(f.Path)+" (sha256 "+d+"…)")
	}
	return out
}

// HookApproved reports whether the person approved the hook h, as it and
// the files it names are now, for root on this machine.
func HookApproved(fs afero.Fs, userConfigDir, root string, h ProjectHook) bool {
	if userConfigDir == "" || fs == nil {
		return false
	}
	m, err := readTrust(fs, userConfigDir)
	if err != nil {
		return false
	}
	for _, e := range m[filepath.Clean(root)] {
		if e == hookEntry(h) {
			return true
		}
	}
	return false
}

// ApprovedHooksFile keeps, for each project root, the hooks the person
// approved last as they were shown, to say what changed since.
func ApprovedHooksFile(userConfigDir string) string {
	return filepath.Join(userConfigDir, "ralph", "approved_hooks.json")
}

func readApprovedHooks(fs afero.Fs, userConfigDir string) (map[string]map[string]ProjectHook, error) {
	return readRecord[map[string]ProjectHook](fs, ApprovedHooksFile(userConfigDir))
}

// TrustHook records that the person approved h, as it is now, for root
// on this machine (`ralph hooks approve`, or "always"), and keeps what
// they were shown, so a later change can be shown against it.
func TrustHook(fs afero.Fs, userConfigDir, root string, h ProjectHook) error {
	if err := trustRule(fs, userConfigDir, root, hookEntry(h)); err != nil {
		return err
	}
	trustMu.Lock()
	defer trustMu.Unlock()
	m, err := readApprovedHooks(fs, userConfigDir)
	if err != nil {
		m = map[string]map[string]ProjectHook{}
	}
	root = filepath.Clean(root)
	if m[root] == nil {
		m[root] = map[string]ProjectHook{}
	}
	m[root][h.key()] = h
	if err := writeRecord(fs, ApprovedHooksFile(userConfigDir), m); err != nil {
		return fmt.Errorf("the approval is recorded, but not what was approved, so a change cannot be shown against it: %w", err)
	}
	return nil
}

// HookChanges say what changed in the files h names since the person
// approved the same hook (same file, event, matcher and command) last,
// one line per file; nil when they never approved it.
func HookChanges(fs afero.Fs, userConfigDir, root string, h ProjectHook) []string {
	if userConfigDir == "" || fs == nil {
		return nil
	}
	m, err := readApprovedHooks(fs, userConfigDir)
	if err != nil {
		return nil
	}
	old, ok := m[filepath.Clean(root)][h.key()]
	if !ok || old.Fingerprint() == h.Fingerprint() {
		return nil
	}
	return ChangedFiles(old, h)
}

// ChangedFiles say what changed in the files a hook names from old to
// cur, one line per file.
func ChangedFiles(old, cur ProjectHook) []string {
	was := map[string]string{}
	for _, f := range old.Files {
		was[f.Path] = f.SHA256
	}
	var out []string
	for _, f := range cur.Files {
		d, ok := was[f.Path]
		switch {
		case !ok:
			out = append(out, text.Visible(f.Path)+": now named")
		case d != f.SHA256:
			out = append(out, text.Visible(f.Path)+": its content changed")
		}
		delete(was, f.Path)
	}
	gone := slices.Sorted(maps.Keys(was))
	for _, p := range gone {
		out = append(out, text.Visible(p)+": no longer there")
	}
	if len(out) == 0 {
		out = append(out, "what it runs changed")
	}
	return out
}

// HookStart is a project's or a plugin's hook that asks to run.
type HookStart struct {
	Hook ProjectHook
	// Changes say what changed since the person approved it last.
	Changes []string
}

// HookRefusal is the sentence that says why the project's hook h does
// not run, and how to let it.
func HookRefusal(h ProjectHook, changes []string, nobody string) string {
	what := fmt.Sprintf("the %s hook `%s` from %s was not approved on this machine", h.Event, text.Visible(h.Command), text.Visible(h.Source))
	if len(changes) > 0 {
		what = fmt.Sprintf("the %s hook `%s` from %s changed since you approved it (%s)", h.Event, text.Visible(h.Command), text.Visible(h.Source), strings.Join(changes, "; "))
	}
	if nobody != "" {
		what += " and " + nobody
	}
	return what + "; approve it with `ralph hooks approve`"
}

// ApproveHook decides whether a hook of the project's files (or of a
// plugin) may run: once the person approved it on this machine, as it is
// now, it may; otherwise the person is asked, when someone can be ("always"
// records it), and it is refused with how to approve it when nobody can.
// --yes does not approve it: it approves what the model asks for, not
// what the repository runs.
func (p *Policy) ApproveHook(ctx context.Context, h ProjectHook) tools.Decision {
	if HookApproved(p.user, p.userDir, p.root, h) {
		return tools.Decision{Allowed: true}
	}
	changes := HookChanges(p.user, p.userDir, p.root, h)
	if nobody := p.HookNobody(); nobody != "" {
		return tools.Decision{Reason: HookRefusal(h, changes, nobody), Unasked: true}
	}
	asker := p.currentAsker()
	if asker == nil {
		// The face that asked went away meanwhile.
		return tools.Decision{Reason: HookRefusal(h, changes, p.nobodyAsked()), Unasked: true}
	}
	q := Question{Hook: &HookStart{Hook: h, Changes: changes}, Remember: []string{hookEntry(h)}}
	ans, err := p.ask(ctx, asker, only(q), nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Decision{Reason: reasonCancelled}
	case err != nil:
		return tools.Decision{Reason: HookRefusal(h, changes, ""), Unasked: true}
	case ans.Remembers():
		note := noter(asker)
		if err := TrustHook(p.user, p.userDir, p.root, h); err != nil {
			note(fmt.Sprintf("could not record the approval of the hook `%s` (%v); approved until ralph exits", text.Visible(h.Command), err), true)
		} else {
			note("hook `"+text.Visible(h.Command)+"` approved on this machine", false)
		}
		return tools.Decision{Allowed: true}
	case ans == Yes:
		return tools.Decision{Allowed: true}
	}
	return tools.Decision{Reason: declined("the user declined to run the hook "+h.Command, ans)}
}

// hookText is the question about a hook the project's files define.
func (q Question) hookText(n naming) string {
	h := q.Hook
	var b strings.Builder
	fmt.Fprintf(&b, "run the %s hook `%s` from %s?%s\n", text.Visible(h.Hook.Event), text.Visible(h.Hook.Command), text.Visible(h.Hook.Source), q.ask(n))
	if len(h.Changes) > 0 {
		b.WriteString("  it changed since you approved it on this machine:\n")
		for _, c := range h.Changes {
			b.WriteString("    " + c + "\n")
		}
	}
	b.WriteString("  as its file defines it:\n")
	for _, l := range h.Hook.Shown() {
		b.WriteString("    " + l + "\n")
	}
	b.WriteString("  the project's files, not yours, define this hook; it runs in the sandbox whenever its event comes; " +
		n.always + " approves it and the files it names, as they are now, on this machine (as `ralph hooks approve` does)")
	return b.String()
}
