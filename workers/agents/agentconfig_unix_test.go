//go:build unix

package agents

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAgentConfigFIFOsAreNotWaitedOn: a FIFO where codex's config.toml or
// opencode's config is looked for reads as no file, at once.
func TestAgentConfigFIFOsAreNotWaitedOn(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, p := range []string{".codex/config.toml", ".config/opencode/opencode.json"} {
		p = filepath.Join(home, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c := readCodexConfig(env); c.Profile != "" || len(c.Providers) != 0 {
			t.Errorf("a FIFO config read as %+v", c)
		}
		if keys := opencodeEnvKeys(env); len(keys) != 0 {
			t.Errorf("a FIFO config named keys %q", keys)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("an agent's config read waited on a FIFO")
	}
}
