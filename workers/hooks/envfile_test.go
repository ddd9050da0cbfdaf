package hooks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// TestEnvFileOnlyForSessionStart: only a SessionStart hook is handed
// CLAUDE_ENV_FILE; what it wrote reaches the Session once the firing
// ends, a credential is withheld and named, and the next firing gets a
// new, empty file.
func TestEnvFileOnlyForSessionStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	made := 0
	var s childenv.Session
	e := &EnvFile{
		Make: func() (string, error) {
			made++
			p := filepath.Join(dir, "env"+strings.Repeat("x", made))
			return p, os.WriteFile(p, nil, 0o600)
		},
		Take: func(p string) ([]byte, error) {
			defer os.Remove(p)
			return os.ReadFile(p)
		},
		Session: &s, Base: []string{"PATH=/bin", "HOME=/h"},
	}
	if env := e.envFor(Hook{Event: PreToolUse}); env != nil {
		t.Fatalf("a PreToolUse hook got %v", env)
	}
	env := e.envFor(Hook{Event: SessionStart})
	if len(env) != 1 || !strings.HasPrefix(env[0], "CLAUDE_ENV_FILE=") {
		t.Fatalf("a SessionStart hook got %v", env)
	}
	if again := e.envFor(Hook{Event: SessionStart}); !slices.Equal(again, env) {
		t.Fatalf("two hooks of one firing got %v and %v", env, again)
	}
	path := strings.TrimPrefix(env[0], "CLAUDE_ENV_FILE=")
	if err := os.WriteFile(path, []byte("export FOO=bar\nexport PATH=\"$HOME/shim:$PATH\"\nexport NPM_TOKEN=npm_x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	note := e.Collect()
	if !strings.Contains(note, "withheld NPM_TOKEN from commands") {
		t.Errorf("note %q does not name the withheld variable", note)
	}
	if got, want := s.Vars(childenv.SandboxLayer), []string{"FOO=bar", "PATH=/h/shim:/bin"}; !slices.Equal(got, want) {
		t.Errorf("session %v, want %v", got, want)
	}
	if next := e.envFor(Hook{Event: SessionStart}); slices.Equal(next, env) || made != 2 {
		t.Errorf("the next firing reused the file: %v", next)
	}
}
