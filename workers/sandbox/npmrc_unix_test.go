//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestNpmrcSecretDoesNotWaitOnAFIFO: a FIFO at ~/.npmrc is no credential
// file and is not waited on; a regular one with a token is one.
func TestNpmrcSecretDoesNotWaitOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".npmrc")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan bool, 1)
	go func() { done <- npmrcSecret(fifo) }()
	select {
	case secret := <-done:
		if secret {
			t.Error("a FIFO at ~/.npmrc was taken for a credential file")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("npmrcSecret waited on a FIFO")
	}
	npmrc := filepath.Join(dir, "token.npmrc")
	if err := os.WriteFile(npmrc, []byte("//registry.npmjs.org/:_authToken=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !npmrcSecret(npmrc) {
		t.Error("an .npmrc with a token was not taken for a credential file")
	}
}
