package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestShellEnvAndSandboxReadableOnlyFromTheUser: shell_env hands
// credentials to the model's commands and sandbox_readable opens secret
// files to them, so only the person's own config may set either.
func TestShellEnvAndSandboxReadableOnlyFromTheUser(t *testing.T) {
	c, err := load(t, map[string]string{userFile: "shell_env = [\"GITHUB_TOKEN\", \"NPM_*\"]\nsandbox_readable = [\"~/.kube\"]\n"}, env{})
	if err != nil || !slices.Equal(c.ShellEnv, []string{"GITHUB_TOKEN", "NPM_*"}) || len(c.SandboxReadable) != 1 ||
		!strings.HasSuffix(c.SandboxReadable[0], "/.kube") || strings.HasPrefix(c.SandboxReadable[0], "~") {
		t.Fatalf("shell_env %q, sandbox_readable %q, %v", c.ShellEnv, c.SandboxReadable, err)
	}
	for _, setting := range []string{`shell_env = ["GITHUB_TOKEN"]`, `sandbox_readable = ["/home"]`} {
		_, err := load(t, map[string]string{projectFile: setting}, env{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "may only be set in your user config") {
			t.Errorf("a project's %s: %v", setting, err)
		}
	}
	if _, err := load(t, map[string]string{userFile: `sandbox_readable = [".ssh"]`}, env{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not an absolute path") {
		t.Fatalf("relative sandbox_readable: %v", err)
	}
}
