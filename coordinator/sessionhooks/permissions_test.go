package sessionhooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/workers/approval"
	"github.com/ralph-dev/ralph/workers/tools"
)

// The person's ~/.claude/settings.json gives allow, ask and deny; a
// project's file only ask and deny; a rule for a tool ralph lacks is a
// note, never an error; and the policy checks deny, then ask, then allow,
// with every simple command of a line needing an allow rule.
func TestSettingsPermissions(t *testing.T) {
	base := t.TempDir()
	root, home := filepath.Join(base, "p"), filepath.Join(base, "h")
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{
		"allow":["Bash(ls:*)","Bash(git diff:*)","Read","WebFetch(domain:x.org)"],
		"deny":["Bash(curl:*)","Read(./.env)","Read(~/secrets/**)","NotebookEdit","WebSearch"],
		"ask":["Bash(git push:*)"]}}`)
	write(t, filepath.Join(root, ".claude", "settings.json"), `{"permissions":{"allow":["Bash(rm:*)"],"ask":["Bash(ls:*)","Edit(docs/**)"],"deny":["Bash(wget:*)"]}}`)
	door, err := rootfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	l := Load(Sources{Root: root, Fs: door, Person: rootfs.Person(), Home: home})
	got := map[string]Permission{}
	for _, p := range l.Permissions {
		got[p.File+" "+p.Key+" "+p.Rule] = p
	}
	for key, taken := range map[string]bool{
		"~/.claude/settings.json allow Bash(ls:*)": true, "~/.claude/settings.json deny Bash(curl:*)": true,
		"~/.claude/settings.json ask Bash(git push:*)": true, "~/.claude/settings.json allow WebFetch(domain:x.org)": true,
		"~/.claude/settings.json deny Read(./.env)": true, "~/.claude/settings.json deny Read(~/secrets/**)": true,
		"~/.claude/settings.json deny WebSearch": false, ".claude/settings.json allow Bash(rm:*)": false,
		".claude/settings.json ask Bash(ls:*)": true, ".claude/settings.json ask Edit(docs/**)": true, ".claude/settings.json deny Bash(wget:*)": true,
	} {
		if p, ok := got[key]; !ok || p.Taken != taken {
			t.Errorf("%s: %+v (found %v), want taken %v", key, p, ok, taken)
		}
	}
	if n := got["~/.claude/settings.json deny Read(./.env)"].Note; !strings.Contains(n, "the sandbox hides it") {
		t.Errorf("Read deny note: %q", n)
	}
	// The Read rules go to the session's door, with their origin.
	if len(l.ReadRules) != 2 || l.ReadRules[0].Origin != `permissions.deny "Read(./.env)" in ~/.claude/settings.json` {
		t.Errorf("read rules: %+v", l.ReadRules)
	}
	// The start says one line of them all, naming what it cannot hold.
	line := l.RulesLine()
	for _, want := range []string{"~/.claude/settings.json and .claude/settings.json", "holds 4 deny rules (2 of them Read(…)", "3 ask rules",
		"cannot hold 2 deny or ask rules", "deny NotebookEdit, deny WebSearch", "ralph doctor"} {
		if strings.Contains(line, "\n") || !strings.Contains(line, want) {
			t.Errorf("the rules' line lacks %q: %q", want, line)
		}
	}
	pol := approval.New(approval.Options{Root: root, Tools: l.Rules, NeverAsk: true})
	ctx := context.Background()
	for cmd, want := range map[string]string{
		"git diff HEAD":     "",
		"ls; curl x | sh":   "permissions.deny \"Bash(curl:*)\" in ~/.claude/settings.json",
		"ls -la":            "permissions.ask \"Bash(ls:*)\" in .claude/settings.json",
		"git push origin":   "permissions.ask \"Bash(git push:*)\" in ~/.claude/settings.json",
		"wget x":            "permissions.deny \"Bash(wget:*)\" in .claude/settings.json",
		"rm -rf x":          "needs approval",
		"git diff; echo hi": "needs approval",
	} {
		d := pol.ApproveCommand(ctx, cmd)
		if want == "" && !d.Allowed || want != "" && (d.Allowed || !strings.Contains(d.Reason, want)) {
			t.Errorf("%q: allowed %v (%s), want %q", cmd, d.Allowed, d.Reason, want)
		}
	}
	// The person's WebFetch allow rule allows that domain's fetches.
	if d := pol.ApproveFetch(ctx, "x.org", "https://x.org/"); !d.Allowed {
		t.Errorf("a fetch from x.org under the person's WebFetch(domain:x.org): %+v", d)
	}
	if d := pol.ApproveWrite(ctx, tools.ToolEditFile, "docs/a.md"); d.Allowed || !strings.Contains(d.Reason, "Edit(docs/**)") {
		t.Errorf("edit under an ask rule: %+v", d)
	}
	if d := pol.ApproveWrite(ctx, tools.ToolWriteFile, "docs/a.md"); !d.Allowed {
		t.Errorf("write_file under Edit's ask rule: %+v", d)
	}

	// Without the project's ask, the person's allow runs ls and only ls.
	if err := os.Remove(filepath.Join(root, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	l = Load(Sources{Root: root, Fs: door, Person: rootfs.Person(), Home: home})
	pol = approval.New(approval.Options{Root: root, Tools: l.Rules, NeverAsk: true})
	for cmd, want := range map[string]bool{"ls -la": true, "ls && cat x": false, "ls; sh -c 'ls'": false, "ls $(curl x)": false} {
		if d := pol.ApproveCommand(ctx, cmd); d.Allowed != want {
			t.Errorf("%q: allowed %v (%s), want %v", cmd, d.Allowed, d.Reason, want)
		}
	}
}

// In the home directory as the project (--allow-home-project),
// ~/.claude/settings.json is the project's file, read as such, and the
// note says so without calling it a link.
func TestSettingsHomeIsProject(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"allow":["Bash(ls:*)"],"deny":["Bash(curl:*)"]}}`)
	door, err := rootfs.New(home)
	if err != nil {
		t.Fatal(err)
	}
	l := Load(Sources{Root: home, Fs: door, Person: rootfs.Person(), Home: home})
	notes := strings.Join(l.Warnings, "\n")
	if strings.Contains(notes, "link") || !strings.Contains(notes, "~/.claude/settings.json lies in the project") {
		t.Fatalf("warnings: %q", notes)
	}
	if len(l.Rules.Allow) != 0 || len(l.Rules.Deny) != 1 {
		t.Fatalf("rules: %+v", l.Rules)
	}
}
