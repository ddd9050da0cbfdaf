package agents

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// fileText is the file's content, "" when it cannot be read.
func fileText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// pidIn is the pid a test command wrote to path, once it has.
func pidIn(t testing.TB, path string) int {
	t.Helper()
	fileAppears(path)
	pid, err := strconv.Atoi(strings.TrimSpace(fileText(path)))
	if err != nil {
		t.Fatalf("no pid in %s: %v", path, err)
	}
	return pid
}
