package sessionhooks

import (
	"os"
	"path/filepath"
	"testing"
)

// write makes the file at path, and the directories above it, hold data.
func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
