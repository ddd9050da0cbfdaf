package config

import (
	"errors"
	"strings"
	"testing"
)

// TestSandboxUnixSocketsOnlyFromTheUser: sandbox_unix_sockets opens a
// socket outside the project to the model's commands (docker's is root),
// so only the person's own config may list one.
func TestSandboxUnixSocketsOnlyFromTheUser(t *testing.T) {
	c, err := load(t, map[string]string{userFile: `sandbox_unix_sockets = ["/var/run/docker.sock", "~/.ssh/agent.sock", "/run/x/../y.sock"]`}, env{})
	if err != nil || len(c.SandboxUnixSockets) != 3 || c.SandboxUnixSockets[0] != "/var/run/docker.sock" ||
		!strings.HasSuffix(c.SandboxUnixSockets[1], "/.ssh/agent.sock") || strings.HasPrefix(c.SandboxUnixSockets[1], "~") || c.SandboxUnixSockets[2] != "/run/y.sock" {
		t.Fatalf("sandbox_unix_sockets: %+v, %v", c.SandboxUnixSockets, err)
	}
	if _, err := load(t, map[string]string{userFile: `sandbox_unix_sockets = ["docker.sock"]`}, env{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not an absolute path") {
		t.Fatalf("relative sandbox_unix_sockets: %v", err)
	}
	_, err = load(t, map[string]string{projectFile: `sandbox_unix_sockets = ["/var/run/docker.sock"]`}, env{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "sandbox_unix_sockets may only be set in your user config") {
		t.Fatalf("project sandbox_unix_sockets: %v", err)
	}
	if _, err := load(t, map[string]string{userFile: `sandbox_unix_socket = ["/x"]`}, env{}); err == nil || !strings.Contains(err.Error(), "sandbox_unix_sockets") {
		t.Fatalf("a misspelt setting should list sandbox_unix_sockets among the known ones: %v", err)
	}
}
