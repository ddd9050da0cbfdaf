package planfile

// The fixed project root and clock of the plan formats' tests, as
// memory's state-file tests have them; the failing file system both use
// is memorytest.FailFs.

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"
)

const sfRoot = "/project"

var sfNow = time.Date(2026, 11, 21, 14, 3, 9, 0, time.UTC)

func sfRead(t *testing.T, fs afero.Fs, name string) string {
	t.Helper()
	b, err := afero.ReadFile(fs, filepath.Join(sfRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sfWrite(t *testing.T, fs afero.Fs, name, text string) {
	t.Helper()
	if err := afero.WriteFile(fs, filepath.Join(sfRoot, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
