package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAttack66cHomeInTheTempDir: the person's home lies in the temporary
// directory ralph is given (HOME=$TMPDIR/home, as CI containers often
// have it), which commands may write. The model's command reads
// ~/.ssh/id_rsa and creates ~/.config/ralph/config.toml, which would run
// the next session unsandboxed. The temporary directory is granted
// around the kept paths, as a sandbox_writable directory is: the key
// never reaches the model nor ralph's output, and the config is not
// made; mktemp still works, in the commands' private temporary
// directory, which is gone when ralph exits. In the default sandbox and
// in the Landlock-only fallback.
func TestAttack66cHomeInTheTempDir(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			proj, tmp := filepath.Join(base, "proj"), filepath.Join(base, "tmp")
			home := filepath.Join(tmp, "home")
			for _, d := range []string{proj, filepath.Join(home, ".ssh")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			gitProject(t, proj)
			const marker = "E2E-HOMETMP-SSH-KEY"
			mustWrite(t, filepath.Join(home, ".ssh", "id_rsa"), marker+"\n")
			// The person's own files that run code: their git's config,
			// Claude Code's hooks (the second attack wrote both).
			personal := map[string]string{
				filepath.Join(home, ".gitconfig"):               "[user]\n\tname = person\n",
				filepath.Join(home, ".claude", "settings.json"): "{}\n",
			}
			for f, c := range personal {
				mustWrite(t, f, c)
			}
			conf := filepath.Join(home, ".config", "ralph", "config.toml")
			srv, results := commandsServer(t, `cat ~/.ssh/id_rsa || echo "no key"; `+
				`{ mkdir -p ~/.config/ralph && echo 'sandbox = "danger-full-access"' > ~/.config/ralph/config.toml; } || echo "no config"; `+
				`echo '[core]' >> ~/.gitconfig || echo "no gitconfig"; echo '{"hooks":{}}' > ~/.claude/settings.json || echo "no settings"; `+
				`touch ~/.bashrc || echo "no bashrc"; cat ~/.local/state/ralph/projects.json || echo "no state"; `+
				`f=$(mktemp) && echo made > "$f" && echo "MKTEMP=$f"`)
			env := cleanEnv(t, append(append([]string{"HOME=" + home, "TMPDIR=" + tmp,
				"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
				"OPENAI_API_KEY=sk-e2e-hometmp", "OPENAI_BASE_URL=" + srv.URL}, gitEnv...), mode.env...)...)
			r := ralph(t, proj, env, nil, "-y", "set up the project")
			res := results()
			t.Logf("exit %d; the model saw:\n%s\n%.1500s", r.code, res, r.stderr)
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			for where, s := range map[string]string{"the model": res, "ralph's output": r.stdout + r.stderr} {
				if strings.Contains(s, marker) {
					t.Errorf("the key reached %s", where)
				}
			}
			for f, c := range personal {
				if b, _ := os.ReadFile(f); string(b) != c {
					t.Errorf("the command changed %s: %q", f, b)
				}
			}
			if _, err := os.Lstat(filepath.Join(home, ".bashrc")); !os.IsNotExist(err) {
				t.Errorf("the command made ~/.bashrc (%v)", err)
			}
			// The names in a hidden directory are no secret; what its files
			// hold is (the guards' records keep a configuration's text).
			if !strings.Contains(res, "no state") {
				t.Errorf("the command read ralph's state directory:\n%s", res)
			}
			if b, err := os.ReadFile(conf); !os.IsNotExist(err) {
				t.Errorf("the command made ralph's config: %q (%v)", b, err)
			}
			m := regexp.MustCompile(`MKTEMP=(\S+)`).FindStringSubmatch(res)
			if m == nil {
				t.Fatalf("mktemp failed in the sandbox")
			}
			private := filepath.Dir(m[1])
			if private == tmp || filepath.Dir(private) != tmp {
				t.Errorf("mktemp made %s, not in a private directory in %s", m[1], tmp)
			} else if _, err := os.Lstat(private); !os.IsNotExist(err) {
				t.Errorf("the private temporary directory %s outlived ralph (%v)", private, err)
			}
		})
	}
}
