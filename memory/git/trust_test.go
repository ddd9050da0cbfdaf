package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// armed configures, in the repository at dir (or the config file given
// with -f), every kind of key that runs a program, each writing its name
// into the returned file.
func armed(t *testing.T, dir, file string) (ran string) {
	t.Helper()
	ran = filepath.Join(t.TempDir(), "ran")
	trap := func(name string) string { return "echo " + name + " >> " + ran + "; cat" }
	where := ""
	if file != "" {
		where = "-f " + file + " "
	}
	sh(t, dir, strings.Join([]string{
		"git config " + where + "filter.x.clean '" + trap("clean") + "'",
		"git config " + where + "filter.x.smudge '" + trap("smudge") + "'",
		"git config " + where + "diff.x.textconv '" + trap("textconv") + "'",
		"git config " + where + "diff.x.command '" + trap("diffcmd") + "'",
		"git config " + where + "merge.x.driver '" + trap("merge") + "'",
	}, " && "))
	return ran
}

// attrs makes every .txt file select the driver x and changes one.
func attrs(t *testing.T, dir string) {
	t.Helper()
	sh(t, dir, "printf '*.txt filter=x diff=x merge=x\\n' > .gitattributes && git -c filter.x.clean=cat add .gitattributes && git -c filter.x.clean=cat commit -qm attrs")
	write(t, filepath.Join(dir, "b.txt"), "changed\n")
}

func trustEnv(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Cleanup(forgetGuards)
}

// exercise runs what ralph's git does with a work tree: a checkpoint, a
// second one, a diff and a restore.
func exercise(t *testing.T, r *Repo, dir string) {
	t.Helper()
	ctx := context.Background()
	cps := NewCheckpoints(r, "s1", filepath.Join(t.TempDir(), "index"), filepath.Join(dir, ".ralph"), "")
	base, err := cps.Record(ctx, "0", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "b.txt"), "changed again\n")
	next, err := cps.Record(ctx, "1", "turn 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Diff(ctx, base.Commit, next.Commit); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(ctx, base.Commit, []string{"b.txt"}); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyFilterRunsNothing checks git's own behaviour that the guard
// relies on: a filter whose commands are empty is no filter, and the
// commands that read files still work.
func TestEmptyFilterRunsNothing(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	attrs(t, dir)
	ran := armed(t, dir, "")
	sh(t, dir, "git config filter.x.process 'echo process >> "+ran+"' && git config filter.x.required true")
	n := "-c filter.x.clean= -c filter.x.smudge= -c filter.x.process= -c filter.x.required=false "
	sh(t, dir, "git "+n+"add b.txt && git "+n+"commit -qm c && git "+n+"checkout HEAD~1 -- b.txt && git "+n+"status --short")
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("an emptied filter ran: %s", b)
	}
}

// TestConfigListingRunsNothing: git's reading of the configuration,
// includes and all, starts no program however the repository is armed.
func TestConfigListingRunsNothing(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	attrs(t, dir)
	ran := armed(t, dir, "")
	sh(t, dir, "git config core.fsmonitor 'echo fsmonitor >> "+ran+"' && git config include.path ../inc && printf '[core]\\n\\tpager = echo pager >> "+ran+"\\n' > inc && "+
		"printf '#!/bin/sh\\necho hook >> "+ran+"\\n' > .git/hooks/post-index-change && chmod +x .git/hooks/post-index-change")
	entries, err := listConfig(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("git config ran: %s", b)
	}
	found := false
	for _, e := range entries {
		if e.Key == "core.pager" && e.Scope == "local" && e.File == filepath.Join(dir, "inc") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the included file's key is not in the listing with its origin: %+v", entries)
	}
}

// TestTheModelsRepositoryRunsNothing: a repository that appeared after
// a session saw the project without one is the model's; none of the
// programs its config names run in ralph's git.
func TestTheModelsRepositoryRunsNothing(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	// The session before saw no repository there.
	if err := saveRecord(dir, &trustRecord{Root: dir}); err != nil {
		t.Fatal(err)
	}
	attrs(t, dir)
	ran := armed(t, dir, "")
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git ran the model's programs:\n%s", b)
	}
	// Another ralph (diff, undo) reads the record and holds to it.
	forgetGuards()
	exercise(t, open(t, dir), dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("without a session, ralph's git ran the model's programs:\n%s", b)
	}
}

// TestThePersonsKeysRunAndTheSessionsDoNot: at first sight the
// repository's config is the person's and its filter runs; a key that
// appears while a session runs does not, in this session or the next;
// one the person adds between sessions does.
func TestThePersonsKeysRunAndTheSessionsDoNot(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	mine := filepath.Join(t.TempDir(), "mine")
	sh(t, dir, "git config filter.x.clean 'echo person >> "+mine+"; cat'")
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if _, err := os.Stat(mine); err != nil {
		t.Fatal("the person's own filter did not run")
	}
	ran := filepath.Join(t.TempDir(), "ran")
	sh(t, dir, "git config diff.x.textconv 'echo textconv >> "+ran+"; cat' && git config merge.x.driver 'echo merge >> "+ran+"'")
	exercise(t, r, dir)
	forgetGuards()
	r = open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("keys that appeared during a session ran:\n%s", b)
	}
	// Between sessions the person adds one.
	later := filepath.Join(t.TempDir(), "later")
	sh(t, dir, "git config filter.x.smudge 'echo smudge >> "+later+"; cat'")
	forgetGuards()
	r = open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	g := guardFor(context.Background(), dir)
	for _, k := range g.untrusted {
		if k == "filter.x.smudge" || k == "filter.x.clean" {
			t.Errorf("the person's %s is not trusted: %v", k, g.untrusted)
		}
	}
}

// TestAnIncludedWorkTreeFileIsNotTrusted is cause 7: the person's config
// includes a tracked file, which the model writes.
func TestAnIncludedWorkTreeFileIsNotTrusted(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	sh(t, dir, "git config include.path ../.gitconfig")
	ran := armed(t, dir, ".gitconfig")
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git ran programs from an included work-tree file:\n%s", b)
	}
	// Written so that a parser of ours would miss the key (a byte-order
	// mark, a line of 5 MiB before it), git still reads it, and so does
	// the guard.
	long := "\xef\xbb\xbf# " + strings.Repeat("x", 5<<20) + "\n[filter \"x\"]\n\tclean = \"echo bom >> " + ran + "; cat\"\n"
	write(t, filepath.Join(dir, ".gitconfig"), long)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git ran a filter written to be missed:\n%s", b)
	}
	sh(t, dir, "git add b.txt")
	if b, _ := os.ReadFile(ran); !strings.Contains(string(b), "bom") {
		t.Fatalf("plain git did not read the filter either, so the test proves nothing: %q", b)
	}
}

// TestAGlobalFileOutsideTheSandboxIsTrusted: the person's ~/.gitconfig
// is theirs (LFS lives there); one where a command may write is not.
func TestAGlobalFileOutsideTheSandboxIsTrusted(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(home, "tmp")) // the sandbox's temporary directory, apart
	global := filepath.Join(home, ".gitconfig")
	ran := armed(t, dir, global)
	r := open(t, dir)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if b, _ := os.ReadFile(ran); !strings.Contains(string(b), "clean") {
		t.Fatalf("the person's global filter did not run: %q", b)
	}
	// The same file where a command may write: a directory the person
	// let commands write (sandbox_writable, --add-dir), or the
	// temporary directory.
	forgetGuards()
	os.Remove(ran)
	Guard(context.Background(), dir, r, []string{home}, nil)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("a global config in a writable directory ran:\n%s", b)
	}
	forgetGuards()
	t.Setenv("TMPDIR", home)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("a global config in the temporary directory ran:\n%s", b)
	}
}

// TestARewrittenCommonDirIsNotFollowed is the git side of cause 1: a
// command points .git/commondir at an armed copy; ralph's git keeps to
// the repository the session opened and says so once.
func TestARewrittenCommonDirIsNotFollowed(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	r := open(t, dir)
	var told []string
	Guard(context.Background(), dir, r, nil, func(s string) { told = append(told, s) })
	exercise(t, r, dir)
	evil := filepath.Join(t.TempDir(), "evil")
	sh(t, dir, "cp -a .git "+evil)
	ran := armed(t, dir, filepath.Join(evil, "config"))
	sh(t, dir, "git config -f "+evil+"/config core.fsmonitor 'echo fsmonitor >> "+ran+"' && echo "+evil+" > .git/commondir")
	sh(t, dir, "printf '#!/bin/sh\\necho hook >> "+ran+"\\n' > "+evil+"/hooks/pre-commit && chmod +x "+evil+"/hooks/pre-commit")
	exercise(t, r, dir)
	exercise(t, r, dir)
	// A commit ralph makes for the person (--commit) runs their hooks,
	// from the repository the session opened, not the copy's.
	write(t, filepath.Join(dir, "b.txt"), "for the commit\n")
	if _, err := r.CommitPaths(context.Background(), []string{"b.txt"}, "task"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git followed the rewritten commondir:\n%s", b)
	}
	if len(told) != 1 || !strings.Contains(told[0], "changed under ralph") {
		t.Fatalf("told %q, want one sentence that the repository changed", told)
	}
}

// TestDiffsGoWithoutTheModelsDrivers: every porcelain diff ralph runs,
// its own -c settings before the subcommand or not, goes without
// external diff and textconv once one is untrusted.
func TestDiffsGoWithoutTheModelsDrivers(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	if err := saveRecord(dir, &trustRecord{Root: dir}); err != nil {
		t.Fatal(err)
	}
	attrs(t, dir)
	armed(t, dir, "")
	for _, args := range [][]string{{"diff", "HEAD"}, {"-c", "core.bigFileThreshold=1", "diff", "HEAD"}, {"log", "-p"}, {"show"}} {
		cmd := build(context.Background(), dir, nil, false, false, args)
		if !slices.Contains(cmd.Args, "--no-textconv") || !slices.Contains(cmd.Args, "--no-ext-diff") {
			t.Errorf("%v: %v", args, cmd.Args)
		}
	}
}

// TestProgramKeys: the keys that run a program are known, and others
// are not taken for them.
func TestProgramKeys(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"filter.lfs.process": true, "filter.a.b.clean": true, "diff.external": true, "diff.x.textconv": true,
		"merge.x.driver": true, "core.sshcommand": true, "gpg.program": true, "gpg.ssh.program": true,
		"credential.https://h.example.helper": true, "core.hookspath": true, "uploadpack.packobjectshook": true,
		"remote.origin.uploadpack": true, "pager.log": true, "hook.lint.command": true, "core.alternaterefscommand": true,
		"interactive.difffilter": true, "core.fsmonitor": true,
		"filter.lfs.required": false, "diff.x.binary": false, "core.autocrlf": false, "remote.origin.url": false, "user.name": false,
	} {
		if _, got := programKey(key, "https://example.com/x"); got != want {
			t.Errorf("programKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestAnIncludeOnABranchIsReadWhenTheBranchIs: git reads a file that
// includeIf "onbranch:…" names only while HEAD is on that branch, so a
// guard decided on another branch lists none of its keys. A command that
// then moves HEAD there (git checkout) changes no configuration file,
// and a guard kept while its files are unchanged would let the file's
// programs run in ralph's git.
func TestAnIncludeOnABranchIsReadWhenTheBranchIs(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	ran := armed(t, dir, filepath.Join(dir, "evil.cfg"))
	sh(t, dir, "git config includeIf.onbranch:evil.path ../evil.cfg && git branch evil")
	time.Sleep(50 * time.Millisecond) // past the clock tick a kept guard waits for
	exercise(t, r, dir)
	sh(t, dir, "git symbolic-ref HEAD refs/heads/evil")
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git ran programs from a file included on the branch HEAD moved to:\n%s", b)
	}
	sh(t, dir, "git add b.txt")
	if b, _ := os.ReadFile(ran); !strings.Contains(string(b), "clean") {
		t.Fatalf("plain git did not read the included filter either, so the test proves nothing: %q", b)
	}
}

// TestAConfigWrittenBackAtItsOldTimeIsReadAgain: a command writes the
// repository's config in place at its old size and sets its
// modification time back; the guard kept from before must not be used.
func TestAConfigWrittenBackAtItsOldTimeIsReadAgain(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	attrs(t, dir)
	ran := filepath.Join(t.TempDir(), "ran")
	// A key of the same length as the filter's, so the file keeps its size.
	sh(t, dir, "git config filter.x.klean 'echo clean >> "+ran+"; cat'")
	time.Sleep(50 * time.Millisecond) // past the clock tick a kept guard waits for
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	exercise(t, r, dir)
	sh(t, dir, `t=$(stat -c %y .git/config) && c=$(sed s/klean/clean/ .git/config) && printf "%s\n" "$c" > .git/config && touch -d "$t" .git/config`)
	exercise(t, r, dir)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("ralph's git ran a filter written into the config at its old time:\n%s", b)
	}
	sh(t, dir, "git add b.txt")
	if b, _ := os.ReadFile(ran); !strings.Contains(string(b), "clean") {
		t.Fatalf("plain git did not read the filter either, so the test proves nothing: %q", b)
	}
}

// TestAGuardsListingServesTheRepositorysOwn: the repository's files and
// what they include, as a kept guard's listing holds them, are what git
// lists of the repository alone (ConfigFiles' own reading), includes,
// conditional includes and a worktree's config among them.
func TestAGuardsListingServesTheRepositorysOwn(t *testing.T) {
	trustEnv(t)
	dir := repo(t)
	sh(t, dir, `printf '[alias]\n\tx = status\n' > inc.cfg && git config include.path ../inc.cfg &&
		printf '[core]\n\tpager = less\n' > .git/cond.cfg && git config "includeIf.gitdir:$PWD/.git.path" cond.cfg &&
		git config extensions.worktreeConfig true && git config --worktree diff.x.textconv cat`)
	time.Sleep(50 * time.Millisecond) // past the clock tick a kept listing waits for
	r := open(t, dir)
	Guard(context.Background(), dir, r, nil, nil)
	guardFor(context.Background(), dir)
	got, ok := repositoryListing(r.GitDir)
	if !ok {
		t.Fatal("no listing kept for the repository's guard")
	}
	out, err := configCommand(context.Background(), r.GitDir, "--list", "--show-origin", "--includes", "-z")
	if err != nil {
		t.Fatal(err)
	}
	want := parseList(out, false, r.GitDir)
	for _, key := range []string{"alias.x", "core.pager", "diff.x.textconv"} {
		if !strings.Contains(fmt.Sprint(want), key) {
			t.Fatalf("git's own listing lacks %s, so the test proves nothing:\n%v", key, want)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("from the guard:\n%v\nfrom git:\n%v", got, want)
	}
	write(t, filepath.Join(dir, "inc.cfg"), "[alias]\n\ty = log\n\tz = diff\n")
	if _, ok := repositoryListing(r.GitDir); ok {
		t.Fatal("a listing was served after an included file changed")
	}
}
