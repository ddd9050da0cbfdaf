package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The end-to-end attacks of issue 66's causes 4 and 5: ralph started its
// own programs (git at every checkpoint, an agent's CLI, doctor's version
// checks) by their bare names on a PATH that an activated virtualenv or
// direnv had put the project's directories on, and notify_command with
// the project as its working directory, so a program or a module the
// model wrote there ran as the person, outside the sandbox. Each payload
// appends its pid and "unsandboxed" to a marker in the person's home,
// which no sandboxed command may write, and copies the person's private
// key into the project, where the model could read it.

// plantedProgram is a payload script: it records that it ran outside the
// sandbox and copies the key beside it, then does what the real program
// would (real, when not empty).
func plantedProgram(marker, key, leak, real string) string {
	s := "#!/bin/sh\necho \"$$ unsandboxed $0\" >> " + marker + "\ncat " + key + " > " + leak + " 2>/dev/null\n"
	if real != "" {
		return s + "exec " + real + " \"$@\"\n"
	}
	return s + "echo 9.9.9 planted\n"
}

// TestPlantedProgramsOnPATHNeverRunAsThePerson is issue 66's cause 4: with
// the project's .venv/bin and node_modules/.bin first on PATH (an activated
// virtualenv, direnv's layout node), the model writes .venv/bin/git and
// node_modules/.bin/claude. The checkpoint after that very command, the
// next session's git, `ralph doctor`'s version check and `ralph run
// --agent claude` ran them as the person. Now each program is found once,
// off the project's PATH entries: the person's git runs (the checkpoints
// are there), doctor asks no planted claude, and --agent claude with only
// the planted one on PATH is refused in one sentence.
func TestPlantedProgramsOnPATHNeverRunAsThePerson(t *testing.T) {
	t.Parallel()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			secret := "-----BEGIN OPENSSH PRIVATE KEY----- p66secret"
			key := filepath.Join(home, ".ssh", "id_rsa")
			mustWrite(t, key, secret+"\n")
			marker, leak := filepath.Join(home, "pwned"), filepath.Join(proj, "leak.txt")
			venv, nodeBin := filepath.Join(proj, ".venv", "bin"), filepath.Join(proj, "node_modules", ".bin")
			srv, _ := commandsServer(t, "mkdir -p .venv/bin node_modules/.bin && printf %s "+
				shellQuote(plantedProgram(marker, key, leak, realGit))+" > .venv/bin/git && printf %s "+
				shellQuote(plantedProgram(marker, key, leak, ""))+" > node_modules/.bin/claude && chmod +x .venv/bin/git node_modules/.bin/claude")
			path := "PATH=" + strings.Join([]string{venv, nodeBin, os.Getenv("PATH")}, string(os.PathListSeparator))
			env := attackEnv(t, home, srv.URL, []string{path})

			if r := ralph(t, proj, env, nil, "-y", "set up"); r.code != 0 {
				t.Fatalf("plant: exit %d\n%s", r.code, r.stderr)
			}
			for _, f := range []string{".venv/bin/git", "node_modules/.bin/claude"} {
				if !exists(filepath.Join(proj, f)) {
					t.Fatalf("the model's command did not plant %s", f)
				}
			}
			if r := ralph(t, proj, env, nil, "-y", "hi"); r.code != 0 {
				t.Fatalf("next session: exit %d\n%s", r.code, r.stderr)
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the planted git ran as the person, outside the sandbox: %s", b)
			}
			// The person's git made the checkpoints.
			refs, err := exec.Command(realGit, "-C", proj, "for-each-ref", "refs/ralph/").Output()
			if err != nil || len(strings.TrimSpace(string(refs))) == 0 {
				t.Fatalf("no checkpoints: the person's git did not run either (%v)", err)
			}

			r := ralph(t, proj, env, nil, "doctor")
			if b, err := os.ReadFile(marker); err == nil || strings.Contains(r.stdout, "planted") {
				t.Fatalf("ralph doctor ran the planted claude: %s\n%s", b, r.stdout)
			}

			writeTasks(t, proj, "one")
			r = ralph(t, proj, env, nil, "-y", "run", "--agent", "claude", "--retries", "0")
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("ralph run --agent claude ran the planted claude: %s", b)
			}
			if !hasClaudeOutside(t, env, filepath.Dir(home)) && (r.code != 2 || !strings.Contains(r.stderr, "only inside the project") ||
				strings.Count(strings.TrimSpace(r.stderr), "\n") != 0) {
				t.Errorf("--agent claude with only the project's claude on PATH: exit %d, want 2 and one sentence\n%s", r.code, r.stderr)
			}

			assertKeyKept(t, srv, leak, "p66secret", "a planted program")
		})
	}
}

// hasClaudeOutside reports whether env's PATH holds a claude outside the
// test's directories, under base (a real one the machine has installed:
// e2e/setup.sh's, whose cache may itself lie under /tmp, as it did in a
// fresh-machine run with RALPH_TEST_CACHE there).
func hasClaudeOutside(t *testing.T, env []string, base string) bool {
	for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
		if dir == base || strings.HasPrefix(dir, base+string(filepath.Separator)) || !filepath.IsAbs(dir) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, "claude")); err == nil && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// TestAgentCLIFoundOffTheProject: with the project's node_modules/.bin
// first on PATH and the person's claude after it, ralph run --agent
// claude starts the person's, never the planted one.
func TestAgentCLIFoundOffTheProject(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	marker := filepath.Join(home, "pwned")
	nodeBin, personBin := filepath.Join(proj, "node_modules", ".bin"), filepath.Join(filepath.Dir(home), "bin")
	mustWrite(t, filepath.Join(nodeBin, "claude"), plantedProgram(marker, "/dev/null", "/dev/null", ""))
	started := filepath.Join(filepath.Dir(home), "person-claude")
	mustWrite(t, filepath.Join(personBin, "claude"), "#!/bin/sh\necho started > "+started+"\nexit 1\n")
	for _, p := range []string{filepath.Join(nodeBin, "claude"), filepath.Join(personBin, "claude")} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTasks(t, proj, "one")
	path := "PATH=" + strings.Join([]string{nodeBin, personBin, os.Getenv("PATH")}, string(os.PathListSeparator))
	env := attackEnv(t, home, "http://127.0.0.1:1", []string{path})
	r := ralph(t, proj, env, nil, "-y", "run", "--agent", "claude", "--retries", "0")
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("ralph run --agent claude ran the project's claude: %s", b)
	}
	if !exists(started) {
		t.Fatalf("the person's claude did not start either: exit %d\n%s", r.code, r.stderr)
	}
}

// TestGitOnlyInTheProjectIsRefused: when the only git on PATH lies in the
// project (.venv/bin/git, where the model may have written it), ralph
// refuses the project in one sentence (exit 2) and runs no git.
func TestGitOnlyInTheProjectIsRefused(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	marker := filepath.Join(home, "pwned")
	venv := filepath.Join(proj, ".venv", "bin")
	mustWrite(t, filepath.Join(venv, "git"), plantedProgram(marker, "/dev/null", "/dev/null", ""))
	if err := os.Chmod(filepath.Join(venv, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := attackEnv(t, home, "http://127.0.0.1:1", []string{"PATH=" + venv})
	r := ralph(t, proj, env, nil, "-y", "hi")
	if exists(marker) {
		t.Fatal("the project's git ran as the person")
	}
	if r.code != 2 || !strings.Contains(r.stderr, "git is on PATH only inside the project") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, want 2 and one sentence:\n%s", r.code, r.stderr)
	}
}

// TestNotifyCommandImportsNoPlantedModule is issue 66's cause 5: the
// person's notify_command `python3 -c 'import json; …'` ran with the
// project as its working directory, which Python puts first on sys.path,
// so the model's json.py ran as the person. Now it runs in the person's
// home with PersonEnv's environment: the real json module is imported and
// the notification arrives.
func TestNotifyCommandImportsNoPlantedModule(t *testing.T) {
	t.Parallel()
	// The system's python3 itself: a version manager's shim (pyenv) is a
	// shell script that takes seconds on a busy machine.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
	}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			secret := "-----BEGIN OPENSSH PRIVATE KEY----- n66secret"
			key := filepath.Join(home, ".ssh", "id_rsa")
			mustWrite(t, key, secret+"\n")
			marker, leak := filepath.Join(home, "pwned"), filepath.Join(proj, "leak.txt")
			payload := "import os\nopen(" + strconvQuote(marker) + ", 'a').write(str(os.getpid()) + ' unsandboxed\\n')\n" +
				"open(" + strconvQuote(leak) + ", 'w').write(open(" + strconvQuote(key) + ").read())\n" +
				"def load(f): return {}\n"
			srv, _ := commandsServer(t, "printf %s "+shellQuote(payload)+" > json.py")
			env := attackEnv(t, home, srv.URL, nil)
			notes := filepath.Join(filepath.Dir(home), "notes")
			// A TOML literal string: the shell gets the line as written.
			userConfig(t, env, "notify_command = '''"+python+" -c 'import json, sys; json.load(sys.stdin); open(\""+notes+
				"\", \"a\").write(\"ok\\n\")' '''\n")
			if r := ralph(t, proj, env, nil, "-y", "set up"); r.code != 0 {
				t.Fatalf("plant: exit %d\n%s", r.code, r.stderr)
			}
			if !exists(filepath.Join(proj, "json.py")) {
				t.Fatal("the model's command did not plant json.py")
			}
			writeTasks(t, proj, "one")
			r := ralph(t, proj, env, nil, "-y", "run", "--agent", "exec:"+testdata("agents", "complete.sh"))
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("notify_command imported the model's json.py as the person: %s", b)
			}
			if b, _ := os.ReadFile(notes); !strings.Contains(string(b), "ok") {
				t.Fatalf("notify_command did not run with the real json module: %q\n%s", b, r.stderr)
			}
			assertKeyKept(t, srv, leak, "n66secret", "the planted module")
		})
	}
}

// assertKeyKept fails when the private key marked word reached the
// model's endpoint, or when who (the planted program) copied it into the
// file leak in the project.
func assertKeyKept(t *testing.T, srv *llmtest.Server, leak, word, who string) {
	t.Helper()
	if b, _ := os.ReadFile(leak); strings.Contains(string(b), word) {
		t.Error(who + " copied the private key into the project")
	}
	for _, req := range srv.Requests() {
		if strings.Contains(string(req.Body), word) {
			t.Error("the private key reached the model's endpoint")
		}
	}
}
