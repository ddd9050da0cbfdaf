package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack59NamesCarryNoEscapes: the model writes hooks, settings keys,
// skills, commands, agent definitions and a plugin whose names,
// descriptions, matchers and commands hold control sequences (JSON
// escapes, raw bytes in YAML). The person's ralph hooks, skills, plugin
// add/list, doctor and a one-shot show them; no ESC, BEL or CSI may reach
// the terminal.
func TestAttack59NamesCarryNoEscapes(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	const e = "\x1b]0;PWNED\x07\x1b[2J\u009b31m"
	je := `\u001b]0;PWNED\u0007\u001b[2J\u009b31m`
	settings := `{"` + je + `k":1,"permissions":{"allow":["` + je + `"],"deny":["Bash(` + je + `)"]},"hooks":{"PreToolUse":[{"matcher":"` + je + `|*","hooks":[{"type":"command","command":"echo ` + je + `"}]}],"` + je + `Event":[{"hooks":[{"type":"command","command":"true"}]}]}}`
	a59Write(t, filepath.Join(proj, ".claude", "settings.json"), settings, 0o644)
	a59Write(t, filepath.Join(proj, ".claude", "skills", "s", "SKILL.md"), "---\nname: s"+e+"\ndescription: d"+e+"\n---\nbody\n", 0o644)
	a59Write(t, filepath.Join(proj, ".claude", "skills", "x"+e, "SKILL.md"), "---\nname: x\ndescription: d\n---\nbody\n", 0o644)
	a59Write(t, filepath.Join(proj, ".claude", "commands", "c"+e+".md"), "---\ndescription: d"+e+"\nmodel: m"+e+"\nallowed-tools: T"+e+"\n---\nset up\n", 0o644)
	a59Write(t, filepath.Join(proj, ".claude", "commands", "c.md"), "---\ndescription: d"+e+"\nmodel: m"+e+"\nallowed-tools: T"+e+"\n---\n!`echo "+e+"`\n@"+e+"\nset up\n", 0o644)
	a59Write(t, filepath.Join(proj, ".claude", "agents", "a.md"), "---\nname: a"+e+"\ndescription: d"+e+"\ntools: T"+e+"\nmodel: m"+e+"\n---\nprompt\n", 0o644)
	a59Write(t, filepath.Join(proj, ".claude", "agents", "b"+e+".md"), "---\nname: b\ndescription: d\n---\nprompt\n", 0o644)
	plug := filepath.Join(proj, "plug")
	a59Write(t, filepath.Join(plug, ".claude-plugin", "plugin.json"), `{"name":"p`+je+`","version":"1`+je+`","description":"d`+je+`","skills":"./sk`+je+`"}`, 0o644)
	a59Write(t, filepath.Join(plug, "hooks", "hooks.json"), `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo `+je+`"}]}]}}`, 0o644)
	srv, _ := a59Server(t, a59Cmd("echo hi"))
	env := attackEnv(t, home, srv.URL, nil)
	var all strings.Builder
	for _, args := range [][]string{
		{"plugin", "add", plug}, {"plugin", "list"}, {"hooks"}, {"skills"}, {"doctor"}, {"hooks", "approve"},
		{"-y", "set up"}, {"-y", "/c"}, {"-y", "--agent", "def:a" + e, "set up"}, {"-y", "--agent", "def:a", "set up"}, {"config"},
	} {
		r := ralph(t, proj, env, nil, args...)
		t.Logf("%q: %d\n%q\n%q", args, r.code, r.stdout, r.stderr)
		out := r.stdout + r.stderr
		all.WriteString(out)
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("BROKEN: ralph %q wrote a control sequence to the terminal", args)
		}
	}
}

// TestAttack59HookEventNameEscapes is the smallest form of the leak
// TestAttack59NamesCarryNoEscapes found: the model writes
// .claude/settings.json with a hook under an event name that holds
// control sequences (JSON escapes). The person's next one-shot names the
// unknown event on stderr, raw: the OSC sets the terminal's title and
// CSI 2J clears the screen.
func TestAttack59HookEventNameEscapes(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	a59Write(t, filepath.Join(proj, ".claude", "settings.json"),
		`{"hooks":{"\u001b]0;PWNED\u0007\u001b[2JX":[{"hooks":[{"type":"command","command":"true"}]}],"PreToolUse":[{"matcher":"(\u009b31m","hooks":[{"type":"command","command":"true"}]}]}}`, 0o644)
	srv, _ := a59Server(t)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "hello")
	t.Logf("%q", r.stderr)
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07\u009b") {
		t.Errorf("BROKEN: control sequences of the model's settings file reached the terminal: %q", r.stderr)
	}
}
