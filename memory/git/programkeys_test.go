package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestRunsProgram(t *testing.T) {
	for _, key := range []string{"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
		"sequence.editor", "filter.lfs.clean", "filter.x.process", "diff.x.textconv", "diff.external", "merge.x.driver",
		"gpg.program", "gpg.ssh.program", "credential.helper", "credential.https://x.example.helper", "alias.st",
		"pager.log", "interactive.difffilter", "uploadpack.packobjectshook", "remote.origin.uploadpack",
		"hook.lint.command", "include.path", "includeif.gitdir:/a.b/.path", "web.browser", "browser.x.cmd",
		"man.x.cmd", "sendemail.smtpserver", "difftool.x.cmd", "mergetool.x.cmd", "core.gitproxy", "Core.FSMonitor"} {
		if !RunsProgram(key) {
			t.Errorf("%s runs a program", key)
		}
	}
	for _, key := range []string{"core.bare", "core.worktree", "user.name", "remote.origin.url", "filter.lfs.required",
		"http.proxy", "core.x.fsmonitor", "diff.x.binary", "core"} {
		if RunsProgram(key) {
			t.Errorf("%s runs no program", key)
		}
	}
}

// TestConfigFilesAsGitReadsThem: the listing follows includes, and its
// git runs nothing the configuration names.
func TestConfigFilesAsGitReadsThem(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	marker := filepath.Join(dir, "ran")
	inc := filepath.Join(dir, "inc.cfg")
	os.WriteFile(inc, []byte("[filter \"x\"]\n\tclean = touch "+marker+"\n"), 0o644)
	cfg := filepath.Join(dir, ".git", "config")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append([]byte("\ufeff"), append(b, []byte("[core]\n\tfsmonitor = touch "+marker+"\n\tpager = touch "+marker+"\n[include]\n\tpath = ../inc.cfg\n")...)...), 0o644)
	entries, err := ConfigFiles(context.Background(), filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if RunsProgram(e.Key) {
			got = append(got, filepath.Base(e.File)+":"+e.Key)
		}
	}
	want := []string{"config:core.fsmonitor", "config:core.pager", "config:include.path", "inc.cfg:filter.x.clean"}
	if !slices.Equal(got, want) {
		t.Errorf("listed %q, want %q", got, want)
	}
	if err := UnsetConfig(context.Background(), cfg, "core.fsmonitor"); err != nil {
		t.Fatal(err)
	}
	if err := UnsetConfig(context.Background(), cfg, "core.fsmonitor"); err != nil {
		t.Errorf("a key no longer there: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("listing or writing the configuration ran a program it names")
	}
}
