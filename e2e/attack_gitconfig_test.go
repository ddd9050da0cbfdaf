package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 42: ralph's own git runs no program named by a file the model can
// write. Each attack leaves configuration that names a payload; the
// payload writes its environment into a directory outside the project
// (writable by anyone, so that a payload that ran anywhere but in the
// sandbox leaves a trace), and the test fails if any trace is there,
// saying whether the model's key was in the payload's environment.

const gitAttackKey = "sk-e2e-gitconfig-key-never-leaked"

// gitAttackModes are the ways the attacks run: the default sandbox, its
// Landlock-only fallback, and no sandbox at all (where nothing but
// ralph's own git stands between the model's configuration and the
// person's rights).
var gitAttackModes = []struct {
	name string
	args []string
	env  []string
}{
	{"workspace-write", []string{"--sandbox", "workspace-write"}, nil},
	{"fallback", []string{"--sandbox", "workspace-write"}, []string{"RALPH_SANDBOX_NO_USERNS=1"}},
	{"danger-full-access", []string{"--sandbox", "danger-full-access"}, nil},
}

// gitAttackDirs makes the project and the outside directory the payload
// writes to, and returns the payload for a name.
func gitAttackDirs(t *testing.T) (proj, outside string, payload func(string) string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, outside = filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{proj, outside} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(outside, 0o777)
	return proj, outside, func(name string) string { return "env > " + outside + "/" + name + "; false" }
}

// gitAttackEnv is the person's environment: the model's key, a
// temporary directory of its own (the sandbox's writable one) apart
// from HOME, and git's identity.
func gitAttackEnv(t *testing.T, url string, extra ...string) []string {
	tmp := t.TempDir()
	return cleanEnv(t, append(append([]string{"OPENAI_API_KEY=" + gitAttackKey, "OPENAI_BASE_URL=" + url, "TMPDIR=" + tmp}, gitEnv...), extra...)...)
}

// noPayloadRan fails the test when a payload left a trace.
func noPayloadRan(t *testing.T, outside, after string) {
	t.Helper()
	entries, _ := os.ReadDir(outside)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(outside, e.Name()))
		t.Errorf("after %s, the payload %s ran outside the sandbox (the model's key in its environment: %v)",
			after, e.Name(), strings.Contains(string(b), gitAttackKey))
	}
	if len(entries) > 0 {
		t.FailNow()
	}
}

// gitIn runs a setup script in dir, as the person.
func gitIn(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, cleanEnv(t, gitEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// TestModelsOwnRepositoryIsNotTrusted is cause 2: in a project that is
// not a repository, the model makes one and configures a clean filter,
// a textconv and fsmonitor in its .git/config. The next session's
// checkpoints, ralph diff and ralph undo used to run them.
func TestModelsOwnRepositoryIsNotTrusted(t *testing.T) {
	t.Parallel()
	for _, mode := range gitAttackModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, outside, payload := gitAttackDirs(t)
			srv, results := commandsServer(t,
				"git init -q -b main && printf '* filter=x diff=x\\n' > .gitattributes && echo a > a.txt",
				"git add . && git -c user.name=m -c user.email=m@example.com commit -qm mine",
				"git config filter.x.clean '"+payload("clean")+"' && git config filter.x.smudge '"+payload("smudge")+"'",
				"git config diff.x.textconv '"+payload("textconv")+"' && git config core.fsmonitor '"+payload("fsmonitor")+"'",
				"echo b >> a.txt && echo ok")
			env := gitAttackEnv(t, srv.URL, mode.env...)
			r := ralph(t, proj, env, nil, append(append([]string{"-y"}, mode.args...), "set up the repository")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			noPayloadRan(t, outside, "the session that made the repository")
			if b, _ := os.ReadFile(filepath.Join(proj, ".git", "config")); !strings.Contains(string(b), "fsmonitor") {
				// The sandbox takes the new repository's program keys back
				// after the command (the guard in the default sandbox, the
				// restore in the fallback); the test arms it again itself,
				// as a process left behind once could, to try ralph's own
				// git on its own.
				if res := results(); !strings.Contains(res, "the sandbox put back") && !strings.Contains(res, "the sandbox took back") {
					t.Fatalf("the model's repository is not armed, so the test proves nothing:\n%s\n%s\n%s", b, r.stdout, results())
				}
				gitIn(t, proj, "git config filter.x.clean '"+payload("clean")+"' && git config diff.x.textconv '"+payload("textconv")+"' && git config core.fsmonitor '"+payload("fsmonitor")+"'")
			}
			// The next session changes the file the filter selects.
			srv2, _ := commandsServer(t, "echo c >> a.txt && echo ok")
			env2 := withURL(env, srv2.URL) // the same person, the same HOME
			r = ralph(t, proj, env2, nil, append(append([]string{"-y"}, mode.args...), "set up a change")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			noPayloadRan(t, outside, "the next session's checkpoints")
			for _, args := range [][]string{{"diff"}, {"undo"}} {
				r := ralph(t, proj, env2, nil, args...)
				if r.code != 0 {
					t.Errorf("ralph %v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
				}
				noPayloadRan(t, outside, "ralph "+args[0])
			}
		})
	}
}

// withURL is env with the model at url.
func withURL(env []string, url string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OPENAI_BASE_URL=") {
			out = append(out, kv)
		}
	}
	return append(out, "OPENAI_BASE_URL="+url)
}

// homeOf is the HOME and XDG settings of an environment.
func homeOf(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_") {
			out = append(out, kv)
		}
	}
	return out
}

// TestIncludedWorkTreeConfigIsNotTrusted is cause 7: the person's
// .git/config includes a tracked file (include.path = ../.gitconfig);
// the model adds a clean filter there and ralph's own checkpoint used to
// run it.
func TestIncludedWorkTreeConfigIsNotTrusted(t *testing.T) {
	t.Parallel()
	for _, mode := range gitAttackModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, outside, payload := gitAttackDirs(t)
			gitProject(t, proj)
			gitIn(t, proj, "printf '[core]\\n\\tautocrlf = false\\n' > .gitconfig && printf '*.txt filter=x\\n' > .gitattributes && echo a > a.txt && git add . && git commit -qm shared && git config include.path ../.gitconfig")
			srv, _ := commandsServer(t,
				"git config -f .gitconfig filter.x.clean '"+payload("clean")+"'",
				"git config -f .gitconfig filter.x.process '"+payload("process")+"'",
				"echo b >> a.txt && echo ok")
			env := gitAttackEnv(t, srv.URL, mode.env...)
			r := ralph(t, proj, env, nil, append(append([]string{"-y"}, mode.args...), "set up the filter")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			noPayloadRan(t, outside, "the session's checkpoints")
			for _, args := range [][]string{{"diff"}, {"undo"}} {
				r := ralph(t, proj, env, nil, args...)
				if r.code != 0 {
					t.Errorf("ralph %v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
				}
				noPayloadRan(t, outside, "ralph "+args[0])
			}
		})
	}
}

// TestRedirectedCommonDirIsNotFollowed is the git side of cause 1: with
// no sandbox at all, the model points .git/commondir at a copy of the
// common directory whose config names a clean filter and fsmonitor and
// whose hooks hold a pre-commit. ralph's own git keeps to the repository
// the session opened, runs none of it, and says once that the
// repository changed under it.
func TestRedirectedCommonDirIsNotFollowed(t *testing.T) {
	t.Parallel()
	proj, outside, payload := gitAttackDirs(t)
	evil := filepath.Join(filepath.Dir(proj), "evil")
	gitProject(t, proj)
	gitIn(t, proj, "printf '*.txt filter=x\\n' > .gitattributes && echo a > a.txt && git add . && git commit -qm attrs")
	srv, _ := commandsServer(t,
		"cp -a .git "+evil,
		"git config -f "+evil+"/config filter.x.clean '"+payload("clean")+"'",
		"git config -f "+evil+"/config core.fsmonitor '"+payload("fsmonitor")+"'",
		"printf '#!/bin/sh\\n"+payload("hook")+"\\n' > "+evil+"/hooks/pre-commit && chmod +x "+evil+"/hooks/pre-commit",
		"echo "+evil+" > .git/commondir && echo b >> a.txt && echo ok")
	env := gitAttackEnv(t, srv.URL)
	r := ralph(t, proj, env, nil, "-y", "--sandbox", "danger-full-access", "set up the copy")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	noPayloadRan(t, outside, "the session's checkpoints")
	if out := r.stdout + r.stderr; strings.Count(out, "the repository changed under ralph") != 1 {
		t.Errorf("ralph did not say once that the repository changed under it:\n%s", out)
	}
	for _, args := range [][]string{{"diff"}, {"undo"}} {
		r := ralph(t, proj, env, nil, args...)
		if r.code != 0 {
			t.Errorf("ralph %v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		noPayloadRan(t, outside, "ralph "+args[0])
	}
	// The trap is armed: the person's own git follows the commondir.
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir, cmd.Env = proj, env
	_ = cmd.Run()
	if entries, _ := os.ReadDir(outside); len(entries) == 0 {
		t.Fatal("plain git ran no payload either, so the test proves nothing")
	}
}

// TestPersonsGlobalFilterStillRuns: a filter in the person's own
// ~/.gitconfig (Git LFS installs itself there) is theirs, outside every
// place a command may write, and still runs in ralph's checkpoints.
func TestPersonsGlobalFilterStillRuns(t *testing.T) {
	t.Parallel()
	proj, outside, _ := gitAttackDirs(t)
	gitProject(t, proj)
	gitIn(t, proj, "printf '*.txt filter=lfsish\\n' > .gitattributes && echo a > a.txt && git -c filter.lfsish.clean=cat add . && git commit -qm attrs")
	srv, _ := commandsServer(t, "echo b >> a.txt && echo ok")
	env := gitAttackEnv(t, srv.URL)
	home := strings.TrimPrefix(homeOf(env)[0], "HOME=")
	marker := filepath.Join(outside, "lfs-ran")
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[filter \"lfsish\"]\n\tclean = \"echo ran >> "+marker+"; cat\"\n\tsmudge = cat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ralph(t, proj, env, nil, "-y", "set up a change")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the person's own filter did not run in ralph's checkpoints: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
}
