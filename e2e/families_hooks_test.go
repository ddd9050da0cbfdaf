package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The hook, approval and permission-rule tests, once per model family:
// each model calls the tools it was trained on (Claude's Bash and Write,
// gpt-5-codex's shell_command and freeform apply_patch, gpt-5's shell
// with an argv and apply_patch through it), and what a person wrote for
// Claude Code (public hooks matching Bash and Edit|Write, permission
// rules naming Bash(…)) holds for every one of them.

// modelFamily is one family's model, how ralph reaches it, and how its
// model spells a command and a file write.
type modelFamily struct {
	name  string
	env   func(t *testing.T, home, url string, extra []string) []string
	bash  func(command string) map[string]any
	write func(path, content string) map[string]any
}

// callOf is a scripted tool call of a function tool.
func callOf(name string, args map[string]any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"name": name, "arguments": string(b)}
}

// patchAdding is a patch that adds path with content.
func patchAdding(path, content string) string {
	return "*** Begin Patch\n*** Add File: " + path + "\n+" + strings.TrimSuffix(content, "\n") + "\n*** End Patch\n"
}

var modelFamilies = []modelFamily{
	{name: "ralph (gpt-4o-mini)",
		env:   attackEnv,
		bash:  func(c string) map[string]any { return callOf("run_command", map[string]any{"command": c}) },
		write: func(p, c string) map[string]any { return callOf("write_file", map[string]any{"path": p, "content": c}) }},
	{name: "claude (claude-sonnet-4-5)",
		env: func(t *testing.T, home, url string, extra []string) []string {
			var env []string
			for _, kv := range attackEnv(t, home, url, extra) {
				if !strings.HasPrefix(kv, "OPENAI_") {
					env = append(env, kv)
				}
			}
			return append(env, "ANTHROPIC_API_KEY=sk-ant-e2e-families", "ANTHROPIC_BASE_URL="+strings.TrimSuffix(url, "/v1"), "RALPH_MODEL=claude-sonnet-4-5")
		},
		bash: func(c string) map[string]any {
			return callOf("Bash", map[string]any{"command": c, "description": "Run it"})
		},
		write: func(p, c string) map[string]any { return callOf("Write", map[string]any{"file_path": p, "content": c}) }},
	{name: "codex (gpt-5-codex, Responses API)",
		env: func(t *testing.T, home, url string, extra []string) []string {
			return attackEnv(t, home, url, append([]string{"RALPH_MODEL=gpt-5-codex"}, extra...))
		},
		bash: func(c string) map[string]any {
			return callOf("shell_command", map[string]any{"command": c, "workdir": "."})
		},
		write: func(p, c string) map[string]any {
			return map[string]any{"type": "custom", "name": "apply_patch", "arguments": patchAdding(p, c)}
		}},
	{name: "gpt-5 (chat completions)",
		env: func(t *testing.T, home, url string, extra []string) []string {
			return attackEnv(t, home, url, append([]string{"RALPH_MODEL=gpt-5"}, extra...))
		},
		bash: func(c string) map[string]any {
			return callOf("shell", map[string]any{"command": []string{"bash", "-lc", c}})
		},
		write: func(p, c string) map[string]any {
			return callOf("shell", map[string]any{"command": []string{"apply_patch", patchAdding(p, c)}})
		}},
}

// familyServer is the stand-in playing turns (each one turn's calls),
// then "done".
func familyServer(t *testing.T, turns ...[]map[string]any) string {
	t.Helper()
	var rs []map[string]any
	for _, calls := range turns {
		rs = append(rs, map[string]any{"tool_calls": calls})
	}
	rs = append(rs, map[string]any{"text": "done"})
	js, err := json.Marshal(map[string]any{"name": "family", "responses": rs})
	if err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, string(js))
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range srv.Requests() {
				t.Logf("%s …%s", r.Path, toolOutputs(r.Body))
			}
		}
	})
	familySrv.Store(t.Name(), srv)
	return srv.URL
}

// TestFamiliesMeetTheSameHooks: for every family, a PreToolUse hook on
// Bash (the public block-dangerous-commands) refuses its dangerous
// command and lets the next run; a PreToolUse hook on Read|Edit|Write|Bash
// (the public protect-secrets) refuses its write of .env, whichever tool
// the model wrote it with; and a recording hook on Edit|Write sees the
// write of another file as Claude Code's Write, with an absolute
// file_path.
func TestFamiliesMeetTheSameHooks(t *testing.T) {
	t.Parallel()
	needNode(t)
	for _, fam := range modelFamilies {
		t.Run(fam.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			mustWrite(t, filepath.Join(proj, ".env"), "API_KEY=sk-live-e2e-families\n")
			// Hooks run in the sandbox, which lets them write in the project only.
			record := filepath.Join(proj, "seen.jsonl")
			recorder := `cat >> ` + quoteShell(record) + `; echo >> ` + quoteShell(record)
			personHooks(t, home, `{"PreToolUse":[`+
				strings.Trim(hookGroup("Bash", publicHook(t, "block-dangerous-commands")), "[]")+`,`+
				strings.Trim(hookGroup("Read|Edit|Write|Bash", publicHook(t, "protect-secrets")), "[]")+`,`+
				strings.Trim(hookGroup("Edit|Write", recorder), "[]")+`]}`)
			url := familyServer(t,
				[]map[string]any{fam.bash("touch ran-marker && git reset --hard")},
				[]map[string]any{fam.bash("touch safe-marker")},
				[]map[string]any{fam.write(".env", "API_KEY=stolen\n")},
				[]map[string]any{fam.write("notes.txt", "kept\n")},
			)
			r := ralph(t, proj, fam.env(t, home, url, nil), nil, "-y", "--no-wait", "tidy up")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(proj, "ran-marker")); err == nil {
				t.Error("the dangerous command ran")
			}
			if _, err := os.Stat(filepath.Join(proj, "safe-marker")); err != nil {
				t.Errorf("the harmless command did not run: %v", err)
			}
			if got := readFileT(t, filepath.Join(proj, ".env")); got != "API_KEY=sk-live-e2e-families\n" {
				t.Errorf(".env is %q now", got)
			}
			if got := readFileT(t, filepath.Join(proj, "notes.txt")); got != "kept\n" {
				t.Errorf("notes.txt = %q", got)
			}
			bodies := familyBodies(t)
			for _, want := range []string{"git-reset-hard", "env-file"} {
				if !strings.Contains(bodies, want) {
					t.Errorf("the model was not told the hook's reason %s", want)
				}
			}
			seen := readFileT(t, record)
			if !strings.Contains(seen, `"tool_name":"Write"`) || !strings.Contains(seen, `"file_path":"`+filepath.Join(proj, "notes.txt")+`"`) {
				t.Errorf("the Edit|Write hook did not see the write of notes.txt as Claude Code's Write:\n%s", seen)
			}
			wantBashrc(t, home)
		})
	}
}

// TestFamiliesMeetTheSamePermissionRules: for every family, the person's
// ~/.claude/settings.json rules hold for the model's own command tool:
// allow Bash(ls:*) runs its ls with nobody to ask and no -y, and deny
// Bash(curl:*) refuses its curl even under -y, naming the rule.
func TestFamiliesMeetTheSamePermissionRules(t *testing.T) {
	t.Parallel()
	for _, fam := range modelFamilies {
		t.Run(fam.name, func(t *testing.T) {
			t.Parallel()
			proj, home := attackLayout(t)
			mustWrite(t, filepath.Join(home, ".claude", "settings.json"), `{"permissions":{"allow":["Bash(ls:*)"],"deny":["Bash(curl:*)"]}}`)
			mustWrite(t, filepath.Join(proj, "marker-families.txt"), "x\n")
			url := familyServer(t, []map[string]any{fam.bash("ls")}, []map[string]any{fam.bash("touch before.txt; curl -s http://127.0.0.1:1/x")})
			r := ralph(t, proj, fam.env(t, home, url, nil), nil, "--no-wait", "look around")
			bodies := familyBodies(t)
			if !strings.Contains(bodies, "marker-families.txt") {
				t.Errorf("ls did not run under the person's allow rule (exit %d): %s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(proj, "before.txt")); err == nil {
				t.Error("a line with curl ran despite the person's deny rule")
			}
			if want := `permissions.deny "Bash(curl:*)"`; !strings.Contains(bodies, want) && !strings.Contains(bodies, strings.ReplaceAll(want, `"`, `\"`)) {
				t.Errorf("the refusal does not name the rule (%s)", want)
			}
		})
	}
}

// familySrv is each test's stand-in (familyServer), by test name.
var familySrv sync.Map

// familyBodies are the bodies of every request the test's model got.
func familyBodies(t *testing.T) string {
	t.Helper()
	v, ok := familySrv.Load(t.Name())
	if !ok {
		t.Fatal("no stand-in for this test")
	}
	var b strings.Builder
	for _, r := range v.(*llmtest.Server).Requests() {
		b.Write(r.Body)
		b.WriteByte('\n')
	}
	return b.String()
}

// quoteShell is s in single quotes for sh.
func quoteShell(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// toolOutputs are the tool results a request carries, in any API's shape,
// for a failing test's log.
func toolOutputs(body []byte) string {
	var b strings.Builder
	for _, key := range []string{`"role":"tool"`, `"type":"tool_result"`, `_output"`} {
		s := string(body)
		for {
			i := strings.Index(s, key)
			if i < 0 {
				break
			}
			b.WriteString(tail(s[i:min(len(s), i+400)], 400) + "\n")
			s = s[i+len(key):]
		}
	}
	return b.String()
}
