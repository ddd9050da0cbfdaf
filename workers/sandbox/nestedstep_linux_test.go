package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// separateGitDir makes sub, a repository whose git directory is gd, in
// root, as git init --separate-git-dir does, with its keys set.
func separateGitDir(t *testing.T, root string, keys ...string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", "--separate-git-dir=gd", "sub")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for i := 0; i+1 < len(keys); i += 2 {
		cmd := exec.Command("git", "--git-dir", filepath.Join(root, "gd"), "config", keys[i], keys[i+1])
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git config: %v\n%s", err, out)
		}
	}
}

// plant appends a program key to gd/config, as a file tool wrote it.
func plant(t *testing.T, root string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, "gd", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("[core]\n\tfsmonitor = evil\n"); err != nil {
		t.Fatal(err)
	}
}

func hasFSMonitor(t *testing.T, root string) bool {
	t.Helper()
	return strings.Contains(readFileT(t, filepath.Join(root, "gd", "config")), "fsmonitor")
}

// TestStepIsCheckedAfter: a step of ralph's own (a file tool) begun
// before any command primes the guard with the person's repositories,
// whose keys stay; what the step planted in a git directory of another
// name is taken back by the check after it; the guard then names gd as a
// git directory and gd/config as a configuration file, for the file
// tools to refuse.
func TestStepIsCheckedAfter(t *testing.T) {
	f := newFixture(t)
	separateGitDir(t, f.root, "core.editor", "vim")
	r := NewRunner(f.policy(WorkspaceWrite, false))
	defer r.Close()
	if r.GitPaths() != nil {
		t.Error("the guard published paths before it looked")
	}
	check := r.BeginStep()
	plant(t, f.root)
	got := undoneMap(check())
	if got["gd/config"] != "core.fsmonitor" {
		t.Errorf("undone %v, want core.fsmonitor in gd/config", got)
	}
	if hasFSMonitor(t, f.root) || !strings.Contains(readFileT(t, filepath.Join(f.root, "gd", "config")), "editor = vim") {
		t.Errorf("gd/config:\n%s", readFileT(t, filepath.Join(f.root, "gd", "config")))
	}
	if again := check(); again != nil {
		t.Errorf("a second call of the check did it again: %v", again)
	}
	p := r.GitPaths()
	if p.Dir(filepath.Join(f.root, "gd", "hooks", "x")) != filepath.Join(f.root, "gd") || !p.Files[filepath.Join(f.root, "gd", "config")] {
		t.Errorf("the guard's paths lack gd: %+v", p)
	}
	if p.Dir(filepath.Join(f.root, "sub", "README")) != "" {
		t.Error("the work tree sub is taken for a git directory")
	}
}

// TestKilledRalphsStepCheckIsDoneByTheNext: ralph is killed between a
// file tool's write and the check after it. The record says a step ran,
// so the next ralph takes the key back before anything primes it as the
// person's, and says so in one line.
func TestKilledRalphsStepCheckIsDoneByTheNext(t *testing.T) {
	f := newFixture(t)
	separateGitDir(t, f.root)
	restore := goneOwner(t)
	r := NewRunner(f.policy(WorkspaceWrite, false))
	restore()
	r.BeginStep()
	plant(t, f.root)
	r.killed()
	if len(recordFiles(t, f.root)) != 1 {
		t.Fatalf("the killed ralph left no record of its step: %v", recordFiles(t, f.root))
	}
	var said []string
	if err := RecoverKilled(f.root, func(s string) { said = append(said, s) }); err != nil {
		t.Fatal(err)
	}
	if hasFSMonitor(t, f.root) {
		t.Errorf("gd/config kept the step's fsmonitor:\n%s", readFileT(t, filepath.Join(f.root, "gd", "config")))
	}
	if len(said) != 1 || !strings.Contains(said[0], "took back core.fsmonitor in gd/config") {
		t.Errorf("said %q", said)
	}
	// The next session primes what is there now: nothing of the model's.
	next := NewRunner(f.policy(WorkspaceWrite, false))
	defer next.Close()
	next.BeginStep()()
	plant(t, f.root)
	if got := undoneMap(next.BeginStep()()); got["gd/config"] != "core.fsmonitor" {
		t.Errorf("the next session's guard took back %v", got)
	}
}

// TestStepsShareTheCommandsRecord: a step between commands renames the
// record rather than writing it again, and leaves it marked clean.
func TestStepsShareTheCommandsRecord(t *testing.T) {
	f := newFixture(t)
	separateGitDir(t, f.root)
	r := NewRunner(f.policy(WorkspaceWrite, false))
	defer r.Close()
	r.BeginStep()()
	recs := recordFiles(t, f.root)
	if len(recs) != 1 || !strings.HasSuffix(recs[0], cleanSuffix) {
		t.Fatalf("after a step: %v, want one clean record", recs)
	}
	fi, _ := os.Stat(recs[0])
	r.BeginStep()()
	recs = recordFiles(t, f.root)
	if len(recs) != 1 || !strings.HasSuffix(recs[0], cleanSuffix) {
		t.Fatalf("after a second step: %v", recs)
	}
	if now, _ := os.Stat(recs[0]); !os.SameFile(fi, now) {
		t.Error("a step that changed nothing wrote the record again")
	}
}

// TestLastCheckAsTheSessionEnds: a key that appeared after the last
// step's check (a process of the session writing late) is taken back by
// Close, and the person is told in one line; a runner that never ran a
// step or a command checks nothing.
func TestLastCheckAsTheSessionEnds(t *testing.T) {
	f := newFixture(t)
	separateGitDir(t, f.root)
	var said []string
	p := f.policy(WorkspaceWrite, false)
	p.Notify = func(s string) { said = append(said, s) }
	r := NewRunner(p)
	r.BeginStep()()
	plant(t, f.root)
	r.Close()
	if hasFSMonitor(t, f.root) {
		t.Error("the last check did not take the key back")
	}
	if len(said) != 1 || !strings.Contains(said[0], "as the session ended, the sandbox took back core.fsmonitor in gd/config") {
		t.Errorf("said %q", said)
	}
	said = nil
	plant(t, f.root)
	NewRunner(p).Close()
	if !hasFSMonitor(t, f.root) || len(said) != 0 {
		t.Errorf("a runner that ran nothing checked: %q", said)
	}
}

// TestKeyWrittenBeforeTheRepositoryIsTheNewRepositorys: a file tool
// wrote gd/config before gd was a repository's (nothing refused it then);
// a command makes the repository. The check after the command takes the
// key back and says it was found in a repository the command made, not
// that the command set it.
func TestKeyWrittenBeforeTheRepositoryIsTheNewRepositorys(t *testing.T) {
	f := newFixture(t)
	g := newNestedGuard(f.root)
	g.prime()
	mustWrite(t, filepath.Join(f.root, "gd", "config"), "[core]\n\tfsmonitor = evil\n")
	separateGitDir(t, f.root)
	us := g.check()
	if len(us) != 1 || !us[0].Made || us[0].File != "gd/config" {
		t.Fatalf("undone %+v, want gd/config of a new repository", us)
	}
	note := strings.Join(UndoneNotes(us, "this command"), "\n")
	if !strings.Contains(note, "took back core.fsmonitor in gd/config, of a repository that appeared during this command") {
		t.Errorf("note %q", note)
	}
	if hasFSMonitor(t, f.root) {
		t.Error("the key stayed")
	}
}

// TestKilledBetweenStepsIsNeverPrimedAsThePersons: ralph is killed after
// a step's check, and a process of its session adds a key after that
// check. The record left marked clean holds the state after the check
// (the step's own change, a user.name, is kept), and the next ralph in
// the project compares with it rather than priming the key as the
// person's; a clean record of another project is left for that project.
func TestKilledBetweenStepsIsNeverPrimedAsThePersons(t *testing.T) {
	f := newFixture(t)
	separateGitDir(t, f.root, "core.editor", "vim")
	other := newFixture(t)
	restore := goneOwner(t)
	elsewhere := NewRunner(other.policy(WorkspaceWrite, false))
	r := NewRunner(f.policy(WorkspaceWrite, false))
	restore()
	elsewhere.BeginStep()()
	elsewhere.killed()
	t.Cleanup(func() {
		for _, rec := range recordFiles(t, other.root) {
			os.Remove(rec)
		}
	})
	check := r.BeginStep()
	cmd := exec.Command("git", "--git-dir", filepath.Join(f.root, "gd"), "config", "user.name", "model")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	if us := check(); len(us) != 0 {
		t.Fatalf("the step's user.name was taken back: %+v", us)
	}
	plant(t, f.root)
	r.killed()
	if recs := recordFiles(t, f.root); len(recs) != 1 || !strings.HasSuffix(recs[0], cleanSuffix) {
		t.Fatalf("records %v, want one marked clean", recs)
	}
	var said []string
	if err := RecoverKilled(f.root, func(s string) { said = append(said, s) }); err != nil {
		t.Fatal(err)
	}
	config := readFileT(t, filepath.Join(f.root, "gd", "config"))
	if hasFSMonitor(t, f.root) || !strings.Contains(config, "name = model") || !strings.Contains(config, "editor = vim") {
		t.Errorf("gd/config, want the state after the last check:\n%s", config)
	}
	if len(said) != 1 || !strings.Contains(said[0], "took back core.fsmonitor in gd/config") {
		t.Errorf("said %q", said)
	}
	if recs := recordFiles(t, f.root); len(recs) != 0 {
		t.Errorf("the record was not removed once checked: %v", recs)
	}
	if recs := recordFiles(t, other.root); len(recs) != 1 {
		t.Errorf("another project's record: %v, want it kept", recs)
	}
	// Once checked, the next session primes what is there: the person's.
	next := NewRunner(f.policy(WorkspaceWrite, false))
	defer next.Close()
	if us := next.BeginStep()(); len(us) != 0 {
		t.Errorf("the next session took back %+v", us)
	}
}

// TestStepFindsAGitDirectoryNoDotGitNames: a step makes gd2, a git
// directory no .git names (git init --bare, then core.worktree), with a
// program key set: the person's git reads its configuration in gd2 as any
// repository's, so the check after the step takes the key back.
func TestStepFindsAGitDirectoryNoDotGitNames(t *testing.T) {
	f := newFixture(t)
	r := NewRunner(f.policy(WorkspaceWrite, false))
	defer r.Close()
	check := r.BeginStep()
	for _, args := range [][]string{
		{"init", "-q", "--bare", "gd2"},
		{"--git-dir", "gd2", "config", "core.bare", "false"},
		{"--git-dir", "gd2", "config", "core.worktree", ".."},
		{"--git-dir", "gd2", "config", "core.fsmonitor", "evil"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = f.root, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	got := undoneMap(check())
	if got["gd2/config"] != "core.fsmonitor" {
		t.Errorf("undone %v, want core.fsmonitor in gd2/config", got)
	}
	if strings.Contains(readFileT(t, filepath.Join(f.root, "gd2", "config")), "fsmonitor") {
		t.Errorf("gd2/config:\n%s", readFileT(t, filepath.Join(f.root, "gd2", "config")))
	}
}

// TestStepFindsAGitDirectoryMadeOfFiles: wt, a directory the guard knows,
// becomes a linked worktree's git directory with files alone (HEAD and a
// commondir naming the person's gd3, which reads config.worktree), so
// its link count does not change; the config.worktree's program key is
// still taken back.
func TestStepFindsAGitDirectoryMadeOfFiles(t *testing.T) {
	f := newFixture(t)
	for _, args := range [][]string{
		{"init", "-q", "--bare", "gd3"},
		{"--git-dir", "gd3", "config", "extensions.worktreeConfig", "true"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = f.root, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Mkdir(filepath.Join(f.root, "wt"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(f.policy(WorkspaceWrite, false))
	defer r.Close()
	check := r.BeginStep()
	for name, data := range map[string]string{
		"HEAD": "ref: refs/heads/main\n", "commondir": "../gd3\n", "config.worktree": "[core]\n\tfsmonitor = evil\n",
	} {
		if err := os.WriteFile(filepath.Join(f.root, "wt", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := undoneMap(check())
	if got["wt/config.worktree"] != "core.fsmonitor" {
		t.Errorf("undone %v, want core.fsmonitor in wt/config.worktree", got)
	}
}
