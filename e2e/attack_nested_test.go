package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The attacks of issue 42 on the person's own git after ralph: a model
// that writes files and runs commands (every one approved with -y) arms a
// repository in the project so that the person's next plain `git status`
// runs its program, outside any sandbox, with the person's environment.
// Each attack worked on 0cf8bec, whose guard read configuration with a
// parser of its own and missed what git reads. The payload writes the
// environment it ran with into a directory outside the project; after
// ralph exits the person runs git status, and that directory must stay
// empty.

// nestedAttack is one attack: the person's project as it is before ralph
// (a repository unless bare), the model's commands (given the temporary
// directory and the payload), and where the person runs git status.
type nestedAttack struct {
	name     string
	bare     bool // the project is not a repository yet
	before   string
	commands func(tmp string, payload func(string) string) []string
	dirs     []string
}

const nestedKey = "sk-e2e-attack-nested-key"

// sh runs a shell script in dir with the test's git identity.
func sh(t *testing.T, dir, script string, env ...string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, cleanEnv(t, append(append([]string{}, gitEnv...), env...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// evilRepo is the shell that makes a repository at dir, with one commit
// (so that it has an index), whose fsmonitor is the payload.
func evilRepo(dir, payload string) string {
	return fmt.Sprintf("git init -q %[1]s && echo a > %[1]s/a && git -C %[1]s add a && git -C %[1]s commit -qm e && git -C %[1]s config core.fsmonitor '%[2]s'", dir, payload)
}

var nestedAttacks = []nestedAttack{
	{name: "GitFileIntoTmp", commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo(tmp+"/evil", p("gitfile")), "mkdir nest && printf 'gitdir: " + tmp + "/evil/.git\\n' > nest/.git && echo ok"}
	}, dirs: []string{"nest"}},
	{name: "GitSymlink", commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo(tmp+"/evil", p("symlink")), "mkdir ln && ln -s " + tmp + "/evil/.git ln/.git && echo ok"}
	}, dirs: []string{"ln"}},
	{name: "ByteOrderMark", commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo("bom", "true"), `{ printf '\xef\xbb\xbf[core]\n\tfsmonitor = "` + p("bom") + `"\n'; grep -v fsmonitor bom/.git/config; } > c && mv c bom/.git/config && echo ok`}
	}, dirs: []string{"bom"}},
	{name: "LongLine", commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo("long", "true"), `{ grep -v fsmonitor long/.git/config; printf '[x]\n\ty = '; head -c 5242880 /dev/zero | tr '\0' a; printf '\n[core]\n\tfsmonitor = "` + p("long") + `"\n'; } > c && mv c long/.git/config && echo ok`}
	}, dirs: []string{"long"}},
	{name: "CommondirElsewhere", commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo(tmp+"/evil", p("commondir")), evilRepo("cd", "true") + " && git -C cd config --unset core.fsmonitor && printf '" + tmp + "/evil/.git\\n' > cd/.git/commondir && echo ok"}
	}, dirs: []string{"cd"}},
	{name: "LinkedWorktreeCommondir", commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo(tmp+"/evil", p("worktree")), "git worktree add -q wt2 && printf '" + tmp + "/evil/.git\\n' > .git/worktrees/wt2/commondir && echo ok"}
	}, dirs: []string{"wt2"}},
	{name: "IncludedWorkTreeFile",
		before: "printf '[user]\\n\\tname = me\\n' > .gitconfig && git add .gitconfig && git commit -qm cfg && git config include.path ../.gitconfig",
		commands: func(tmp string, p func(string) string) []string {
			return []string{`printf '[core]\n\tfsmonitor = "` + p("include") + `"\n' >> .gitconfig && echo ok`}
		}, dirs: []string{"."}},
	{name: "TopLevelGitInit", bare: true, commands: func(tmp string, p func(string) string) []string {
		return []string{evilRepo(".", p("init-fsmonitor")) + " && git config filter.x.clean '" + p("init-clean") + "' && echo '* filter=x' > .gitattributes && echo b > a && echo ok"}
	}, dirs: []string{"."}},
}

// TestNestedAttacksNeverRunInThePersonsGit runs every attack under the
// default sandbox and under the Landlock-only fallback.
func TestNestedAttacksNeverRunInThePersonsGit(t *testing.T) {
	t.Parallel()
	for _, fallback := range []bool{false, true} {
		for _, a := range nestedAttacks {
			name := a.name
			if fallback {
				name += "/Fallback"
			}
			t.Run(name, func(t *testing.T) { runNestedAttack(t, a, fallback) })
		}
	}
}

func runNestedAttack(t *testing.T, a nestedAttack, fallback bool) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, outside, tmp := filepath.Join(base, "proj"), filepath.Join(base, "outside"), filepath.Join(base, "tmp")
	for _, d := range []string{proj, outside, tmp} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// The outside directory takes writes from anyone: the payload must
	// not run, not merely fail to write.
	os.Chmod(outside, 0o777)
	if !a.bare {
		gitProject(t, proj)
	}
	if a.before != "" {
		sh(t, proj, a.before)
	}
	payload := func(name string) string { return "env > " + outside + "/" + name + "; false" }
	srv, results := commandsServer(t, a.commands(tmp, payload)...)
	extra := []string{"OPENAI_API_KEY=" + nestedKey, "OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp}
	if fallback {
		extra = append(extra, "RALPH_SANDBOX_NO_USERNS=1")
	}
	env := cleanEnv(t, append(extra, gitEnv...)...)
	r := ralph(t, proj, env, nil, "-y", "set up the repositories")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if res := results(); !strings.Contains(res, "ok") {
		t.Fatalf("the attack's commands did not all run:\n%s", res)
	}
	// The person's own git, after ralph: status in the project and in the
	// armed directory, with the key in the environment.
	for _, dir := range a.dirs {
		cmd := exec.Command("git", "status")
		cmd.Dir, cmd.Env = filepath.Join(proj, dir), env
		cmd.CombinedOutput() // a repository taken away is an error, and fine
	}
	payloadsNeverRan(t, outside)
}

// payloadsNeverRan fails for every payload that left its environment in
// outside, saying whether it had the key.
func payloadsNeverRan(t *testing.T, outside string) {
	t.Helper()
	entries, _ := os.ReadDir(outside)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(outside, e.Name()))
		t.Errorf("the payload %s ran outside the sandbox (the key in its environment: %v)", e.Name(), strings.Contains(string(b), nestedKey))
	}
}

// TestPersonsEditorSurvivesAMovedGit: the person's nested repository has
// core.editor; a command moves its .git into a subdirectory. The guard
// used to take the editor back, as a key the command had set.
func TestPersonsEditorSurvivesAMovedGit(t *testing.T) {
	t.Parallel()
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "Default", true: "Fallback"}[fallback], func(t *testing.T) {
			proj := filepath.Join(realTemp(t), "proj")
			os.MkdirAll(proj, 0o755)
			gitProject(t, proj)
			sh(t, proj, "git init -q lib && git -C lib config core.editor vim")
			srv, results := commandsServer(t, "mkdir lib/sub && mv lib/.git lib/sub/.git && echo ok")
			extra := []string{"OPENAI_BASE_URL=" + srv.URL}
			if fallback {
				extra = append(extra, "RALPH_SANDBOX_NO_USERNS=1")
			}
			r := ralph(t, proj, cleanEnv(t, append(extra, gitEnv...)...), nil, "-y", "set up")
			if r.code != 0 || !strings.Contains(results(), "ok") {
				t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, results())
			}
			if b, _ := os.ReadFile(filepath.Join(proj, "lib/sub/.git/config")); !strings.Contains(string(b), "editor = vim") {
				t.Errorf("the person's core.editor was taken back:\n%s\n%s", b, results())
			}
		})
	}
}

// TestFallbackNeverDeletesThePersonsHooks: in the Landlock-only fallback
// a command moves .git into a subdirectory; another session's command
// brings back a .git that a command took out of the project. The person's
// hooks and configuration must be where git reads them at the end; the
// restore used to leave .git displaced, and then to delete the hooks and
// config of the .git brought back as if the command had made them.
func TestFallbackNeverDeletesThePersonsHooks(t *testing.T) {
	t.Parallel()
	base := realTemp(t)
	proj, tmp := filepath.Join(base, "proj"), filepath.Join(base, "tmp")
	os.MkdirAll(proj, 0o755)
	os.MkdirAll(tmp, 0o755)
	gitProject(t, proj)
	hook := filepath.Join(proj, ".git", "hooks", "post-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho mine\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(proj, ".git", "config"))
	session := func(command string) {
		t.Helper()
		srv, results := commandsServer(t, command+" && echo ok")
		env := cleanEnv(t, append([]string{"OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp, "RALPH_SANDBOX_NO_USERNS=1"}, gitEnv...)...)
		r := ralph(t, proj, env, nil, "-y", "set up")
		// A command that takes .git out of the project leaves nothing to
		// checkpoint into: that run says so and exits 1, its work kept.
		lostGit := r.code == 1 && strings.Contains(r.stderr, "ralph: a git checkpoint could not be recorded")
		if r.code != 0 && !lostGit || !strings.Contains(results(), "ok") {
			t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, results())
		}
	}
	intact := func(when string) {
		t.Helper()
		if b, err := os.ReadFile(hook); err != nil || string(b) != "#!/bin/sh\necho mine\n" {
			t.Errorf("%s: the person's hook is gone (%v)", when, err)
		}
		if b, _ := os.ReadFile(filepath.Join(proj, ".git", "config")); string(b) != string(config) {
			t.Errorf("%s: the person's config is gone or changed:\n%s", when, b)
		}
	}
	session("mkdir -p sub && mv .git sub/.git")
	intact("after .git was moved into a subdirectory")
	// Taken out of the project and brought back in another session,
	// .git is not the one this session recorded (there was none): its
	// hooks may be the command's and are set aside, but never deleted,
	// and its configuration stays.
	session("mv .git " + tmp + "/away")
	session("mv " + tmp + "/away .git")
	if b, _ := os.ReadFile(filepath.Join(proj, ".git", "config")); string(b) != string(config) {
		t.Errorf("the person's config brought back is gone or changed:\n%s", b)
	}
	found := false
	for _, p := range []string{hook, filepath.Join(proj, ".git", "hooks.ralph-set-aside", "post-commit")} {
		if b, err := os.ReadFile(p); err == nil && string(b) == "#!/bin/sh\necho mine\n" {
			found = true
		}
	}
	if !found {
		t.Error("the person's hook brought back was deleted")
	}
}

// realTemp is a temporary directory with its links resolved.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
