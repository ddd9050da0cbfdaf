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
	t.Parallel()
	for _, key := range []string{"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
		"sequence.editor", "filter.lfs.clean", "filter.x.process", "diff.x.textconv", "diff.external", "merge.x.driver",
		"gpg.program", "gpg.ssh.program", "credential.helper", "credential.https://x.example.helper", "alias.st",
		"pager.log", "interactive.difffilter", "uploadpack.packobjectshook", "remote.origin.uploadpack",
		"hook.lint.command", "include.path", "includeif.gitdir:/a.b/.path", "web.browser", "browser.x.cmd",
		"man.x.cmd", "sendemail.smtpserver", "difftool.x.cmd", "mergetool.x.cmd", "core.gitproxy", "Core.FSMonitor"} {
		if !RunsProgram(key, "x") {
			t.Errorf("%s runs a program", key)
		}
	}
	for _, key := range []string{"core.bare", "core.worktree", "user.name", "remote.origin.url", "filter.lfs.required",
		"http.proxy", "core.x.fsmonitor", "diff.x.binary", "core"} {
		if RunsProgram(key, "https://example.com/x") {
			t.Errorf("%s runs no program", key)
		}
	}
}

// TestTransportsRunProgramsByValue: the transport keys run a program by
// what they say, not by their name.
func TestTransportsRunProgramsByValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key, value string
		want       bool
	}{
		{"remote.origin.url", "ext::sh -c touch% /tmp/x", true},
		{"remote.origin.url", "  EXT::sh -c x", true},
		{"remote.origin.pushurl", "ext::git-upload-pack %S", true},
		{"remote.origin.url", "fd::3", true},
		{"remote.a.b.url", "Fd::0,1", true},
		{"remote.origin.url", "https://example.com/r.git", false},
		{"remote.origin.url", "git@example.com:r.git", false},
		{"remote.origin.url", "../other", false},
		{"remote.origin.url", "https://example.com/ext::x", false},
		{"url.ext::sh -c touch% /tmp/x.insteadof", "https://", true},
		{"url.EXT::sh -c x.pushinsteadof", "git@", true},
		{"url.fd::7.insteadof", "https://", true},
		{"url.https://mirror.example/.insteadof", "https://example.com/", false},
		{"url.https://mirror.example/.insteadof", "ext::sh", false},
		{"protocol.allow", "always", true},
		{"protocol.allow", "user", true},
		{"protocol.allow", "never", false},
		{"protocol.ext.allow", "always", true},
		{"protocol.ext.allow", " Never ", false},
		{"protocol.https.allow", "always", true},
		{"protocol.version", "2", false},
		{"remote.url", "ext::sh", false},
		{"submodule.lib.url", "ext::sh -c x", true},
		{"submodule.lib.url", "https://example.com/lib.git", false},
	} {
		if got := RunsProgram(c.key, c.value); got != c.want {
			t.Errorf("RunsProgram(%q, %q) = %v, want %v", c.key, c.value, got, c.want)
		}
	}
}

// TestConfigFilesAsGitReadsThem: the listing follows includes, and its
// git runs nothing the configuration names.
func TestConfigFilesAsGitReadsThem(t *testing.T) {
	t.Parallel()
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
		if RunsProgram(e.Key, e.Value) {
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

// TestOwnGitRefusesProgramTransports: ralph's git, the one that talks to
// remotes too (RemoteCommand), never runs an ext:: remote's program, even
// when the repository's configuration allows the transport and the
// environment lists it in GIT_ALLOW_PROTOCOL.
func TestOwnGitRefusesProgramTransports(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	marker := filepath.Join(dir, "ran")
	cfg := filepath.Join(dir, ".git", "config")
	b, _ := os.ReadFile(cfg)
	extra := "[protocol]\n\tallow = always\n[protocol \"ext\"]\n\tallow = always\n[remote \"origin\"]\n\turl = ext::sh -c touch% " + marker +
		"\n[remote \"other\"]\n\turl = https://example.invalid/r.git\n[url \"ext::sh -c touch% " + marker + "\"]\n\tinsteadOf = https://\n"
	if err := os.WriteFile(cfg, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, allow := range []string{"", "ext:file"} {
		if allow != "" {
			t.Setenv("GIT_ALLOW_PROTOCOL", allow)
		}
		for _, remote := range []string{"origin", "other"} {
			out, err := RemoteCommand(context.Background(), dir, nil, "fetch", remote).CombinedOutput()
			if err == nil {
				t.Errorf("fetch %s succeeded: %s", remote, out)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("fetch %s (GIT_ALLOW_PROTOCOL=%s) ran the ext:: program: %s", remote, allow, out)
			}
		}
	}
	cmd := command(context.Background(), dir, nil, false, []string{"fetch", "origin"})
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("fetch succeeded: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("ralph's local git ran the ext:: program")
	}
}
