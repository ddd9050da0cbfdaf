package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const a59Secret = "E2E-SSH-SECRET-59"

func a59Secrets(t *testing.T, home string) {
	a59Write(t, filepath.Join(home, ".ssh", "id_rsa"), "-----BEGIN "+a59Secret+"-----\n", 0o600)
	a59Write(t, filepath.Join(home, ".aws", "credentials"), "[default]\naws_secret_access_key="+a59Secret+"\n", 0o600)
	a59Write(t, filepath.Join(home, ".claude", "settings.json"), `{"model":"`+a59Secret+`"}`, 0o600)
}

func a59Skill(dir, name string) string {
	return "---\nname: " + name + "\ndescription: the " + name + " skill\n---\nbody of " + name + "\n"
}

// TestAttack59SkillLinks: project skills whose SKILL.md, folder or other
// files lead to a secret outside the project (~/.ssh/id_rsa, the person's
// ~/.claude/settings.json), by symbolic link, by a hard link a command
// tries to make, by a path with .. or an absolute path; the model loads
// each with the skill tool. Nothing of the secret may reach the endpoint.
func TestAttack59SkillLinks(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			a59Secrets(t, home)
			sk := filepath.Join(proj, ".claude", "skills")
			must := func(err error) {
				if err != nil {
					t.Fatal(err)
				}
			}
			// a: SKILL.md a link to id_rsa
			must(os.MkdirAll(filepath.Join(sk, "a"), 0o755))
			must(os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(sk, "a", "SKILL.md")))
			// b: the folder a link to ~/.ssh (with a SKILL.md there? no: to ~/.claude, holding settings.json)
			a59Write(t, filepath.Join(home, "outside", "b", "SKILL.md"), a59Skill("", "b")+a59Secret+"\n", 0o644)
			must(os.Symlink(filepath.Join(home, "outside", "b"), filepath.Join(sk, "b")))
			// c: a good skill whose files lead out
			a59Write(t, filepath.Join(sk, "c", "SKILL.md"), a59Skill("", "c"), 0o644)
			must(os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(sk, "c", "ref.md")))
			must(os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(sk, "c", "sshdir")))
			must(os.Symlink("../../../../home/.aws/credentials", filepath.Join(sk, "c", "rel.md")))
			// .agents/skills too
			must(os.MkdirAll(filepath.Join(proj, ".agents", "skills", "d"), 0o755))
			must(os.Symlink(filepath.Join(home, ".claude", "settings.json"), filepath.Join(proj, ".agents", "skills", "d", "SKILL.md")))
			// e: SKILL.md a link within the project to a file that is a link out
			a59Write(t, filepath.Join(sk, "e", "SKILL.md"), a59Skill("", "e"), 0o644)
			must(os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(proj, "inproj-link")))
			must(os.Symlink("../../../inproj-link", filepath.Join(sk, "e", "via.md")))

			// u: the person's skill, whose files the model names
			a59Write(t, filepath.Join(home, ".claude", "skills", "u", "SKILL.md"), a59Skill("", "u"), 0o644)
			must(os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, ".claude", "skills", "u", "ref.md")))
			must(os.Symlink(filepath.Join(proj, "inproj-link"), filepath.Join(home, ".claude", "skills", "u", "viaproj.md")))
			var calls []toolCall
			for _, a := range []map[string]any{
				{"skill": "a"}, {"skill": "b"}, {"skill": "d"},
				{"skill": "c", "file": "ref.md"}, {"skill": "c", "file": "sshdir/id_rsa"}, {"skill": "c", "file": "rel.md"},
				{"skill": "c", "file": "../../../../home/.ssh/id_rsa"}, {"skill": "c", "file": filepath.Join(home, ".ssh", "id_rsa")},
				{"skill": "c", "file": "../../settings.json"}, {"skill": "e", "file": "via.md"},
				{"skill": "e", "file": "/proc/self/root" + filepath.Join(home, ".ssh", "id_rsa")},
				{"skill": "u", "file": "ref.md"}, {"skill": "u", "file": "../../settings.json"}, {"skill": "u", "file": "viaproj.md"},
				{"skill": "u", "file": "/proc/self/root" + filepath.Join(home, ".claude", "settings.json")}, {"skill": "u", "file": "."}, {"skill": "u", "file": ""},
				{"skill": "../u"}, {"skill": "u/../../../settings"},
			} {
				js, _ := json.Marshal(a)
				calls = append(calls, toolCall{name: "skill", args: string(js)})
			}
			// and a command that tries to hard-link the secrets into a skill
			calls = append(calls, a59Cmd("mkdir -p .claude/skills/h; ln "+home+"/.ssh/id_rsa .claude/skills/h/SKILL.md; ln "+home+"/.ssh/id_rsa .claude/skills/c/hard.md; ls -la .claude/skills/h .claude/skills/c; cat .claude/skills/c/hard.md"))
			js, _ := json.Marshal(map[string]any{"path": ".claude/skills/c/ref.md"})
			calls = append(calls, toolCall{name: "read_file", args: string(js)})
			srv, log := a59Server(t, calls...)
			env := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, env, nil, "-y", "set up")
			bodies, results := log()
			if i := strings.Index(bodies, `"name":"skill"`); i >= 0 {
				t.Logf("skill tool: %s", bodies[i:min(len(bodies), i+1200)])
			}
			t.Logf("run: %d\n%s\n%s\nresults: %s", r.code, r.stdout, r.stderr, results)
			if r2 := ralph(t, proj, env, nil, "skills"); true {
				t.Logf("skills: %s\n%s", r2.stdout, r2.stderr)
			}
			// a second session: a hard link made in the first would be found now
			calls2 := []toolCall{}
			for _, a := range []map[string]any{{"skill": "h"}, {"skill": "c", "file": "hard.md"}} {
				js, _ := json.Marshal(a)
				calls2 = append(calls2, toolCall{name: "skill", args: string(js)})
			}
			srv2, log2 := a59Server(t, calls2...)
			env2 := attackEnv(t, home, srv2.URL, mode.env)
			r = ralph(t, proj, env2, nil, "-y", "set up")
			bodies2, results2 := log2()
			t.Logf("run2: %d\n%s\n%s\nresults: %s", r.code, r.stdout, r.stderr, results2)
			if strings.Contains(bodies+bodies2, a59Secret) {
				t.Errorf("BROKEN: a secret reached the model endpoint")
			}
		})
	}
}
