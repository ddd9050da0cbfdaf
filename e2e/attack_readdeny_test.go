package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 88, cause 8: the Read(…) deny rules of ~/.claude/settings.json
// were listed and warned about, one line each at every start, and held
// nowhere: read_file, list_files, search, the @ imports and embeds and
// the model's commands all read what they name. Now one door holds them
// (memory/kept): the file tools and the prompt's readers refuse what a
// rule names, and the sandbox hides it from commands; the start says one
// line of the rules it holds. The test failed on 6f9943f; its payload is
// whether a secret a rule names reached the stand-in model's request log.

const (
	a88Env     = "E2E-A88-READ-DENIED-dotenv-secret"
	a88Vault   = "E2E-A88-READ-DENIED-vault-secret"
	a88Visible = "E2E-A88-an-ordinary-file"
)

func a88Call(name string, args map[string]any) toolCall {
	js, _ := json.Marshal(args)
	return toolCall{name: name, args: string(js)}
}

// TestAttack88ReadDenyRulesHoldOnEveryRoute: the person denies reading
// ./.env and ./secrets/**. The project's CLAUDE.md imports @.env, the
// person's prompt attaches @.env and @secrets/vault.txt, and the model
// reads them with read_file (by name and through a link), lists and
// searches for them, and reads them, copies them and links them with
// its commands. No secret reaches the endpoint, an ordinary file still
// does, and the start names the rules in one line.
func TestAttack88ReadDenyRulesHoldOnEveryRoute(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			mustWrite(t, filepath.Join(home, ".claude", "settings.json"),
				`{"permissions":{"deny":["Read(./.env)","Read(./secrets/**)","Bash(curl:*)"]}}`)
			mustWrite(t, filepath.Join(proj, ".env"), "TOKEN="+a88Env+"\n")
			mustWrite(t, filepath.Join(proj, "secrets", "vault.txt"), a88Vault+"\n")
			mustWrite(t, filepath.Join(proj, "notes.txt"), a88Visible+"\n")
			mustWrite(t, filepath.Join(proj, "sub", "keep.txt"), "a directory of the project's\n")
			mustWrite(t, filepath.Join(proj, "CLAUDE.md"), "# Rules\nThe environment: @.env\n")
			if err := os.Symlink(".env", filepath.Join(proj, "env.md")); err != nil {
				t.Fatal(err)
			}
			srv, log := a59Server(t,
				a88Call("read_file", map[string]any{"path": ".env"}),
				a88Call("read_file", map[string]any{"path": "env.md"}),
				a88Call("read_file", map[string]any{"path": "secrets/vault.txt"}),
				a88Call("read_file", map[string]any{"path": "notes.txt"}),
				a88Call("list_files", map[string]any{"path": "secrets"}),
				a88Call("search", map[string]any{"pattern": "E2E-A88-READ-DENIED"}),
				a59Cmd("cat .env secrets/vault.txt env.md; ls secrets; cp .env copy.txt; cat copy.txt; ln .env sub/hard; cat sub/hard; ln secrets/vault.txt sub/vault; cat sub/vault; echo ran"),
			)
			r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "-y", "set up @.env @secrets/vault.txt")
			_, results := log()
			if r.code != 0 || !strings.Contains(results, "ran") {
				t.Fatalf("the model's command did not run: exit %d\n%s\n%s", r.code, results, r.stderr)
			}
			saw := endpointSaw(srv)
			for _, s := range []string{a88Env, a88Vault} {
				if strings.Contains(saw, s) {
					t.Errorf("BROKEN: the endpoint received %q; the tools' results:\n%s", s, results)
				}
			}
			// The fallback cannot hide a file inside the project from
			// commands without taking from them the right to make files
			// beside it: it says so once, naming the paths, and the
			// values those files hold reach the model masked.
			if mode.name == "landlock-only" {
				if !strings.Contains(r.stderr, "stays readable to commands") || !strings.Contains(r.stderr, ".env") {
					t.Errorf("the fallback does not say what its commands can still read:\n%s", r.stderr)
				}
				if !strings.Contains(results, "TOKEN=[REDACTED]") {
					t.Errorf("the fallback's cat of .env did not come back masked:\n%s", results)
				}
			}
			if !strings.Contains(saw, a88Visible) {
				t.Errorf("an ordinary file did not reach the model:\n%s", results)
			}
			if !strings.Contains(results, `refuses reading .env`) {
				t.Errorf("read_file's refusal does not name the rule:\n%s", results)
			}
			system, _ := a88First(t, srv)
			if !strings.Contains(system, `(@.env, imported by CLAUDE.md, was left out: permissions.deny "Read(./.env)" in ~/.claude/settings.json refuses reading it)`) {
				t.Errorf("the system prompt does not say the import was left out:\n%s", system)
			}
			var lines []string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.Contains(l, "Read(") || strings.Contains(l, "deny rule") {
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 || !strings.Contains(lines[0], "ralph holds 3 deny rules (2 of them Read(…)") {
				t.Errorf("the start does not name the rules in one line:\n%s", r.stderr)
			}
		})
	}
}
