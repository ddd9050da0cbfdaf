package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

func setupTree(t *testing.T, root string) {
	t.Helper()
	for _, f := range []string{
		"README.md",
		"cmd/ralph/main.go",
		"cmd/ralph/main_test.go",
		"workers/tools.go",
		".git/config",
		".ralph/state.json",
		"web/node_modules/lib/index.js",
		"web/app.js",
	} {
		writeTestFile(t, filepath.Join(root, f), "package x // TODO fix "+f+"\n")
	}
}

func TestListFiles(t *testing.T) {
	ts := newTestToolset(t, Options{})
	setupTree(t, ts.Root())
	out := mustOK(t, call(t, ts, "list_files", nil))
	want := strings.Join([]string{
		"README.md", "cmd/", "cmd/ralph/", "cmd/ralph/main.go", "cmd/ralph/main_test.go",
		"web/", "web/app.js", "workers/", "workers/tools.go",
	}, "\n")
	if out != want {
		t.Fatalf("listing:\n%s\nwant:\n%s", out, want)
	}
	if out := mustOK(t, call(t, ts, "list_files", map[string]any{"path": "cmd"})); out != "cmd/ralph/\ncmd/ralph/main.go\ncmd/ralph/main_test.go" {
		t.Fatalf("subdirectory listing: %q", out)
	}
	for pattern, want := range map[string]string{
		"*.go":          "cmd/ralph/main.go\ncmd/ralph/main_test.go\nworkers/tools.go",
		"*_test.go":     "cmd/ralph/main_test.go",
		"cmd/*/main.go": "cmd/ralph/main.go",
		"**/*.js":       "web/app.js",
		"cmd/**":        "cmd/\ncmd/ralph/\ncmd/ralph/main.go\ncmd/ralph/main_test.go",
		"ralph":         "cmd/ralph/",
	} {
		if out := mustOK(t, call(t, ts, "list_files", map[string]any{"pattern": pattern})); out != want {
			t.Errorf("pattern %q:\n%s\nwant:\n%s", pattern, out, want)
		}
	}
	if out := mustOK(t, call(t, ts, "list_files", map[string]any{"pattern": "*.rs"})); out != `no entries under . match "*.rs"` {
		t.Errorf("no match: %q", out)
	}
	mustErr(t, call(t, ts, "list_files", map[string]any{"pattern": "[a-"}), "invalid pattern")
	mustErr(t, call(t, ts, "list_files", map[string]any{"path": "nope"}), "cannot list nope: it does not exist")
}

func TestListFilesCap(t *testing.T) {
	ts := newTestToolset(t, Options{})
	for i := range 1100 {
		writeTestFile(t, filepath.Join(ts.Root(), "many", fmt.Sprintf("f%04d", i)), "")
	}
	out := mustOK(t, call(t, ts, "list_files", map[string]any{"path": "many"}))
	lines := strings.Split(out, "\n")
	if len(lines) != maxListEntries+1 || !strings.HasPrefix(lines[maxListEntries], "[listing stopped after 1000 entries") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestSearch(t *testing.T) {
	ts := newTestToolset(t, Options{})
	root := ts.Root()
	setupTree(t, root)
	writeTestFile(t, filepath.Join(root, "notes.txt"), "first\nsecond TODO\r\nthird\n")
	writeTestFile(t, filepath.Join(root, "image.bin"), "TODO\x00binary")
	writeTestFile(t, filepath.Join(root, "huge.txt"), "TODO\n"+strings.Repeat("x", maxSearchFile))
	writeTestFile(t, filepath.Join(root, "long.txt"), "TODO "+strings.Repeat("ü", 1000)+"\n")

	out := mustOK(t, call(t, ts, "search", map[string]any{"pattern": `TODO`}))
	lines := strings.Split(out, "\n")
	want := []string{
		"README.md:1: package x // TODO fix README.md",
		"cmd/ralph/main.go:1: package x // TODO fix cmd/ralph/main.go",
		"cmd/ralph/main_test.go:1: package x // TODO fix cmd/ralph/main_test.go",
		"long.txt:1: TODO " + strings.Repeat("ü", maxMatchLineLen-5) + " [...]",
		"notes.txt:2: second TODO",
		"web/app.js:1: package x // TODO fix web/app.js",
		"workers/tools.go:1: package x // TODO fix workers/tools.go",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("search output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	out = mustOK(t, call(t, ts, "search", map[string]any{"pattern": `(?i)SECOND`, "path": "notes.txt"}))
	if out != "notes.txt:2: second TODO" {
		t.Fatalf("single file search: %q", out)
	}
	if out := mustOK(t, call(t, ts, "search", map[string]any{"pattern": "nothing here", "path": "cmd"})); out != `no matches for "nothing here" in cmd` {
		t.Fatalf("no matches: %q", out)
	}
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": `func (`}), "invalid regular expression: error parsing regexp")
	mustErr(t, call(t, ts, "search", map[string]any{"pattern": "x", "path": "missing"}), "cannot search missing: it does not exist")
}

func TestSearchCap(t *testing.T) {
	ts := newTestToolset(t, Options{})
	writeTestFile(t, filepath.Join(ts.Root(), "many.txt"), strings.Repeat("match\n", 500))
	out := mustOK(t, call(t, ts, "search", map[string]any{"pattern": "match"}))
	lines := strings.Split(out, "\n")
	if len(lines) != maxSearchMatches+1 || lines[maxSearchMatches] != "[search stopped after 200 matches; narrow the pattern or path, or pass skip: 200 for the rest]" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestSearchRespectsOutputBudget(t *testing.T) {
	ts := newTestToolset(t, Options{Options: workers.Options{MaxOutputBytes: 200}})
	writeTestFile(t, filepath.Join(ts.Root(), "many.txt"), strings.Repeat("match\n", 100))
	out := mustOK(t, call(t, ts, "search", map[string]any{"pattern": "match"}))
	if len(out) > 300 || !strings.Contains(out, "[search stopped after") {
		t.Fatalf("output not budgeted (%d bytes): %q", len(out), out)
	}
}

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "dir/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/z/a.go", true},
		{"x/**/a.go", "x/a.go", true},
		{"x/**/a.go", "x/y/z/a.go", true},
		{"x/**/a.go", "y/a.go", false},
		{"x/**", "x/y", true},
		{"x/*", "x/y/z", false},
	} {
		if got := matchGlob(c.pattern, c.name); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v", c.pattern, c.name, got)
		}
	}
}

func TestListSkipsUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can read any directory")
	}
	ts := newTestToolset(t, Options{})
	writeTestFile(t, filepath.Join(ts.Root(), "locked", "x"), "")
	writeTestFile(t, filepath.Join(ts.Root(), "open", "y"), "")
	os.Chmod(filepath.Join(ts.Root(), "locked"), 0)
	t.Cleanup(func() { os.Chmod(filepath.Join(ts.Root(), "locked"), 0o755) })
	out := mustOK(t, call(t, ts, "list_files", nil))
	if !strings.Contains(out, "open/y") {
		t.Fatalf("listing: %q", out)
	}
}
