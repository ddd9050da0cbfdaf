package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack60RunProgramsGetNoKey: ralph run with every provider key set:
// each external agent CLI (the person chose it), the person's --verify,
// a task's own verify line (the model's), and the person's git hook that
// --commit runs: an agent CLI gets its own provider's key only (it needs
// it), every other program none.
func TestAttack60RunProgramsGetNoKey(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude", "codex", "gemini", "opencode", "exec"} {
		for _, mode := range sandboxModes {
			t.Run(agent+"/"+mode.name, func(t *testing.T) {
				proj, home := attackLayout(t)
				out := filepath.Join(filepath.Dir(home), "outside")
				os.MkdirAll(out, 0o777)
				bin := filepath.Join(filepath.Dir(home), "bin")
				for _, n := range []string{"claude", "codex", "gemini", "opencode", "myagent"} {
					mustWrite(t, filepath.Join(bin, n), "#!/bin/sh\nenv > "+out+"/agent-"+n+".txt\necho done > agent-did.txt\necho '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\"}'\nexit 0\n")
					os.Chmod(filepath.Join(bin, n), 0o755)
				}
				// The git hook runs in the sandbox, in the work tree.
				mustWrite(t, filepath.Join(proj, ".git", "hooks", "post-commit"), "#!/bin/sh\nenv > githook.txt\n")
				os.Chmod(filepath.Join(proj, ".git", "hooks", "post-commit"), 0o755)
				mustWrite(t, filepath.Join(proj, "RALPH_TASKS.md"), "# Tasks\n\n- [ ] make a file\n  verify: env > task-verify-env.txt\n")
				shIn(t, proj, "git add -A && git commit -qm tasks")
				srv := a60Server(t, 0, 0)
				env := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp"), "OPENAI_BASE_URL=" + srv.URL, "PATH=" + bin + ":" + os.Getenv("PATH")}, gitEnv...)
				env = append(env, attack60KeyEnv()...)
				env = append(env, mode.env...)
				env = cleanEnv(t, env...)
				ag := agent
				if agent == "exec" {
					ag = "exec:" + filepath.Join(bin, "myagent")
				}
				r := ralph(t, proj, env, nil, "run", "-y", "--agent", ag, "--verify", "env > person-verify-env.txt", "--commit", "--max-iterations", "1")
				t.Logf("exit %d\n%.500s\n%.2000s", r.code, r.stdout, r.stderr)
				for _, f := range []string{out + "/agent-claude.txt", out + "/agent-codex.txt", out + "/agent-gemini.txt", out + "/agent-opencode.txt", out + "/agent-myagent.txt", proj + "/githook.txt", proj + "/person-verify-env.txt", proj + "/task-verify-env.txt"} {
					b, err := os.ReadFile(f)
					if err != nil {
						continue
					}
					k := keysIn(string(b))
					base := filepath.Base(f)
					t.Logf("%s: keys %v", base, k)
					own := map[string]string{"agent-claude.txt": "ANTHROPIC_", "agent-codex.txt": "OPENAI_", "agent-gemini.txt": "GEMINI_"}[base]
					for _, key := range k {
						if own == "" || !strings.HasPrefix(key, own) {
							t.Errorf("BROKEN: %s got %s", base, key)
						}
					}
				}
			})
		}
	}
}
