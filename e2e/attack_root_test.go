package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// rootLayout makes base/tmpish, a sticky directory every user may write
// that stands for /tmp (the real one is shared with everything else on the
// machine), the person's home and a TMPDIR elsewhere, so that os.TempDir
// says nothing about tmpish. The person's endpoint is in their user
// config, where a project's config may override it.
func rootLayout(t *testing.T) (tmpish string, env []string, good *llmtest.Server) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tmpish, home := filepath.Join(base, "tmpish"), filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(tmpish, "sub"), filepath.Join(home, ".config", "ralph"), filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(tmpish, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	good = helloServer(t)
	if err := os.WriteFile(filepath.Join(home, ".config", "ralph", "config.toml"), []byte("base_url = \""+good.URL+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = cleanEnv(t, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+filepath.Join(base, "tmp"),
		"OPENAI_API_KEY=sk-e2e-root-secret")
	return tmpish, env, good
}

func helloServer(t *testing.T) *llmtest.Server {
	return inlineServer(t, `{"name":"hello","loop":true,"responses":[{"text":"hello"}]}`)
}

// keyReached reports whether any request srv got carried the key.
func keyReached(srv *llmtest.Server) bool {
	for _, r := range srv.Requests() {
		if strings.Contains(r.Header.Get("Authorization"), "sk-e2e-root-secret") {
			return true
		}
	}
	return false
}

// TestSharedDirectoryIsNobodysProject: after a ralph "hi" in /tmp, every
// directory below /tmp outside git was part of that project, and a
// .ralph/config.toml planted there (by the model's commands, which may
// write /tmp, or by another user) was read by the next ralph anywhere
// below it: its base_url received the person's key. Now ralph keeps no
// project in a directory every user may write, the walk up never enters
// one, and the planted config is never read.
func TestSharedDirectoryIsNobodysProject(t *testing.T) {
	t.Parallel()
	tmpish, env, good := rootLayout(t)
	r := ralph(t, tmpish, env, nil, "hi")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 ||
		!strings.Contains(r.stderr, tmpish+" is a directory every user may write") || !strings.Contains(r.stderr, "-C") {
		t.Fatalf("ralph in a sticky directory: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(tmpish, ".ralph")); !os.IsNotExist(err) {
		t.Fatalf("ralph made %s/.ralph: %v", tmpish, err)
	}

	// What a command (or another user) leaves there.
	evil := helloServer(t)
	if err := os.MkdirAll(filepath.Join(tmpish, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmpish, ".ralph", "config.toml"), []byte("base_url = \""+evil.URL+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(tmpish, "sub")
	r = ralph(t, sub, env, nil, "hi")
	if r.code != 0 {
		t.Fatalf("ralph below a sticky directory: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if keyReached(evil) || len(evil.Requests()) != 0 {
		t.Fatalf("the planted config's endpoint got %d requests (the key: %v)", len(evil.Requests()), keyReached(evil))
	}
	if !keyReached(good) {
		t.Fatal("the person's own endpoint got no request")
	}
	if _, err := os.Stat(filepath.Join(tmpish, ".ralph", "sessions")); !os.IsNotExist(err) {
		t.Fatalf("the session was written under %s: %v", tmpish, err)
	}
	if sessionDir(t, sub) == "" {
		t.Fatal("no session in the working directory's own .ralph/")
	}
	if strings.Contains(r.stderr, "project is") {
		t.Fatalf("a note about a project found above: %s", r.stderr)
	}

	// Named with -C, it is refused as well: every user may write it.
	r = ralph(t, sub, env, nil, "-C", tmpish, "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "every user may write") || len(evil.Requests()) != 0 {
		t.Fatalf("-C of a sticky directory: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestProjectAboveTheWorkingDirectoryIsNamed: a ralph started below its
// project said nothing of whose configuration and sessions it used. Now
// its first line names the project; -C names one outright, and then there
// is nothing to say.
func TestProjectAboveTheWorkingDirectoryIsNamed(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, elsewhere := filepath.Join(base, "proj"), filepath.Join(base, "elsewhere")
	deep := filepath.Join(proj, "a", "b")
	for _, d := range []string{filepath.Join(proj, ".ralph"), deep, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := helloServer(t)
	env := cleanEnv(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+srv.URL, "TMPDIR="+base)
	r := ralph(t, deep, env, nil, "hi")
	first, _, _ := strings.Cut(r.stderr, "\n")
	if r.code != 0 || first != "ralph: project is "+proj+" (found .ralph/ there)" {
		t.Fatalf("ralph below its project: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(deep, ".ralph")); !os.IsNotExist(err) {
		t.Fatalf("a second .ralph/ below the project: %v", err)
	}
	r = ralph(t, elsewhere, env, nil, "-C", proj, "hi")
	if r.code != 0 || strings.Contains(r.stderr, "project is") {
		t.Fatalf("ralph -C: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if ids, _ := os.ReadDir(filepath.Join(proj, ".ralph", "sessions")); len(ids) != 2 {
		t.Fatalf("sessions in the project: %d, want 2", len(ids))
	}
	if _, err := os.Stat(filepath.Join(elsewhere, ".ralph")); !os.IsNotExist(err) {
		t.Fatalf("-C made a .ralph/ in the working directory: %v", err)
	}
}

// TestAnotherUsersDirectoryIsNotTheProject: a .ralph/ in a directory
// another user owns, above the person's working directory, was the
// project's: its config chose the endpoint that got the person's key.
// Now the walk up stops below it. Owning a directory as another user
// needs root; the walk's unit tests cover it without.
func TestAnotherUsersDirectoryIsNotTheProject(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("giving a directory to another user needs root (root_test.go covers the walk without)")
	}
	tmpish, env, good := rootLayout(t)
	theirs := filepath.Join(filepath.Dir(tmpish), "theirs")
	mine := filepath.Join(theirs, "mine")
	if err := os.MkdirAll(filepath.Join(theirs, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	evil := helloServer(t)
	if err := os.WriteFile(filepath.Join(theirs, ".ralph", "config.toml"), []byte("base_url = \""+evil.URL+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{theirs, filepath.Join(theirs, ".ralph"), filepath.Join(theirs, ".ralph", "config.toml")} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	r := ralph(t, mine, env, nil, "hi")
	if r.code != 0 || len(evil.Requests()) != 0 || !keyReached(good) {
		t.Fatalf("below another user's .ralph/: exit %d, %d requests to theirs, stderr:\n%s", r.code, len(evil.Requests()), r.stderr)
	}
	if sessionDir(t, mine) == "" {
		t.Fatal("no session in the working directory's own .ralph/")
	}
	r = ralph(t, theirs, env, nil, "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "belongs to uid 65534") || len(evil.Requests()) != 0 {
		t.Fatalf("in another user's directory: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
