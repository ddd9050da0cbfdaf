package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/ralph/e2e/browser"
)

// The real programs the tests drive (the agents' CLIs, the MCP servers
// from npm, bd, the Temporal dev server, Chromium, bubblewrap, tmux, …)
// are made ready by e2e/setup.sh (`make test-setup`, which `make test`
// runs first): what it can install without the system's package manager
// lands, at pinned versions, in the bin/ directory of its cache, which
// TestMain puts first on the tests' PATH.

// setupCommand is what a person runs to install what a test misses.
const setupCommand = "make test-setup (e2e/setup.sh)"

// testCacheBin is the bin/ directory of e2e/setup.sh's cache:
// $RALPH_TEST_CACHE/bin, by default ralph-test/bin in the user's cache
// directory, spelt as the script spells it ($XDG_CACHE_HOME, or
// ~/.cache).
func testCacheBin() string {
	if dir := os.Getenv("RALPH_TEST_CACHE"); dir != "" {
		return filepath.Join(dir, "bin")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "ralph-test", "bin")
}

// useTestCache puts the setup's bin/ first on the PATH of the tests and
// of every process they start (cleanEnv keeps PATH), so the tests run the
// pinned programs whatever else the machine has installed.
func useTestCache() {
	bin := testCacheBin()
	if fi, err := os.Stat(bin); err != nil || !fi.IsDir() {
		return
	}
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// needTool returns the path of a program the test needs, and fails the
// test when it is missing: a missing one is a machine not set up, said in
// one sentence with the command that installs it, never a quiet skip.
func needTool(t testing.TB, name, from string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s (%s) is not installed, and this test needs it: %s installs it", name, from, setupCommand)
	}
	return path
}

// needChromium fails the test when no Chromium is installed, as needTool
// does for the other programs.
func needChromium(t testing.TB) {
	t.Helper()
	if browser.Find() == "" {
		t.Fatalf("no Chromium is installed, and this browser test needs it: %s names the package to install", setupCommand)
	}
}
