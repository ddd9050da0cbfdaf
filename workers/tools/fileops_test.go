package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	ts := newTestToolset(t, Options{})
	writeTestFile(t, filepath.Join(ts.Root(), "dir", "a.txt"), numberedLines(10))
	writeTestFile(t, filepath.Join(ts.Root(), "nonl.txt"), "one\ntwo")
	writeTestFile(t, filepath.Join(ts.Root(), "empty.txt"), "")

	out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "dir/a.txt"}))
	if want := "[dir/a.txt: lines 1-10 of 10]\n" + numberedLines(10); out != want {
		t.Fatalf("whole file:\n%q\nwant\n%q", out, want)
	}
	out = mustOK(t, call(t, ts, "read_file", map[string]any{"path": "./dir/a.txt", "offset": 3, "limit": 2}))
	if want := "[dir/a.txt: lines 3-4 of 10; continue with offset=5]\nline 3\nline 4\n"; out != want {
		t.Fatalf("offset/limit: %q", out)
	}
	out = mustOK(t, call(t, ts, "read_file", map[string]any{"path": "dir/a.txt", "offset": 9, "limit": 50}))
	if want := "[dir/a.txt: lines 9-10 of 10]\nline 9\nline 10\n"; out != want {
		t.Fatalf("limit past the end: %q", out)
	}
	out = mustOK(t, call(t, ts, "read_file", map[string]any{"path": "nonl.txt", "offset": 2}))
	if want := "[nonl.txt: lines 2-2 of 2]\ntwo"; out != want {
		t.Fatalf("last line without newline: %q", out)
	}
	if out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "empty.txt"})); out != "[empty.txt: empty file]" {
		t.Fatalf("empty file: %q", out)
	}
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "dir/a.txt", "offset": 11}), "offset 11 is past the end of dir/a.txt, which has 10 lines")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "dir/a.txt", "limit": -1}), "must not be negative")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "missing.txt"}), "cannot read missing.txt: it does not exist")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "dir"}), "dir is a directory; use list_files")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": ""}), "non-empty path")
}

func TestReadFileTruncatesAndPages(t *testing.T) {
	ts := newTestToolset(t, Options{Options: workers.Options{MaxOutputBytes: 100}})
	writeTestFile(t, filepath.Join(ts.Root(), "big.txt"), numberedLines(100))
	out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "big.txt"}))
	header, body, _ := strings.Cut(out, "\n")
	// "line 1\n".."line 9\n" is 63 bytes; with "line 10\n".."line 14\n" it is 103.
	if want := "[big.txt: lines 1-13 of 100; output truncated at 100 bytes; continue with offset=14]"; header != want {
		t.Fatalf("header %q, want %q", header, want)
	}
	if body != strings.Join(strings.SplitAfter(numberedLines(13), "\n")[:13], "") {
		t.Fatalf("body %q", body)
	}
	out = mustOK(t, call(t, ts, "read_file", map[string]any{"path": "big.txt", "offset": 14}))
	if !strings.HasPrefix(out, "[big.txt: lines 14-25 of 100; output truncated") || !strings.Contains(out, "\nline 14\n") {
		t.Fatalf("second page: %q", out)
	}
}

func TestReadFileCutsHugeLine(t *testing.T) {
	ts := newTestToolset(t, Options{Options: workers.Options{MaxOutputBytes: 1000}})
	writeTestFile(t, filepath.Join(ts.Root(), "min.js"), strings.Repeat("é", 100000)+"\nsecond\n")
	out := mustOK(t, call(t, ts, "read_file", map[string]any{"path": "min.js"}))
	header, body, _ := strings.Cut(out, "\n")
	if !strings.Contains(header, "line 1 of 2 is longer than 1000 bytes and was cut") || !strings.Contains(header, "offset=2") {
		t.Fatalf("header %q", header)
	}
	if len(body) > 1000 || body != strings.Repeat("é", 500) {
		t.Fatalf("body has %d bytes; must be whole runes within the budget", len(body))
	}
}

func TestReadFileRefusesBinary(t *testing.T) {
	ts := newTestToolset(t, Options{})
	writeTestFile(t, filepath.Join(ts.Root(), "bin"), "ELF\x00\x01\x02")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "bin"}), "bin looks like a binary file")
}

func TestWriteFile(t *testing.T) {
	ts := newTestToolset(t, Options{})
	out := mustOK(t, call(t, ts, "write_file", map[string]any{"path": "hello.txt", "content": "hello world\n"}))
	if out != "wrote 12 bytes to hello.txt" {
		t.Fatalf("output %q", out)
	}
	out = mustOK(t, call(t, ts, "write_file", map[string]any{"path": "a/b/c.txt", "content": ""}))
	if out != "wrote 0 bytes to a/b/c.txt" {
		t.Fatalf("output %q", out)
	}
	if got := readTestFile(t, filepath.Join(ts.Root(), "hello.txt")); got != "hello world\n" {
		t.Fatalf("content %q", got)
	}
	fi, err := os.Stat(filepath.Join(ts.Root(), "a/b/c.txt"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v, %v", fi, err)
	}
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "a/b", "content": "x"}), "cannot write a/b: it is a directory")
	mustErr(t, call(t, ts, "write_file", map[string]any{"path": "hello.txt/x", "content": "x"}), "hello.txt/x")
	assertNoTempFiles(t, ts.Root())
}

func TestWriteFileKeepsModeAndSymlink(t *testing.T) {
	ts := newTestToolset(t, Options{})
	script := filepath.Join(ts.Root(), "run.sh")
	writeTestFile(t, script, "#!/bin/sh\n")
	if err := os.Chmod(script, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(ts.Root(), "link.sh")); err != nil {
		t.Fatal(err)
	}
	mustOK(t, call(t, ts, "write_file", map[string]any{"path": "link.sh", "content": "#!/bin/sh\necho hi\n"}))
	fi, err := os.Stat(script)
	if err != nil || fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode after write: %v, %v", fi.Mode(), err)
	}
	if got := readTestFile(t, script); got != "#!/bin/sh\necho hi\n" {
		t.Fatalf("content %q", got)
	}
	if lfi, err := os.Lstat(filepath.Join(ts.Root(), "link.sh")); err != nil || lfi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("writing through a symlink replaced the symlink")
	}
	assertNoTempFiles(t, ts.Root())
}

func TestEditFile(t *testing.T) {
	ts := newTestToolset(t, Options{})
	path := filepath.Join(ts.Root(), "main.go")
	writeTestFile(t, path, "package main\n\nfunc a() {}\nfunc b() {}\nfunc a2() {}\n")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustOK(t, call(t, ts, "edit_file", map[string]any{"path": "main.go", "old_string": "func b() {}", "new_string": "func b() {\n\treturn\n}"}))
	if out != "edited main.go: replaced 1 line with 3 lines" {
		t.Fatalf("output %q", out)
	}
	if got := readTestFile(t, path); got != "package main\n\nfunc a() {}\nfunc b() {\n\treturn\n}\nfunc a2() {}\n" {
		t.Fatalf("content %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", fi.Mode())
	}

	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "main.go", "old_string": "func c()", "new_string": "x"}),
		"old_string not found in main.go (the file may have changed; read it again)")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "main.go", "old_string": "func a", "new_string": "func z"}),
		"old_string occurs 2 times in main.go; add surrounding context so it matches exactly once")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "main.go", "old_string": "", "new_string": "x"}), "must not be empty")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "main.go", "old_string": "a", "new_string": "a"}), "identical")
	mustErr(t, call(t, ts, "edit_file", map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"}), "cannot edit nope.go: it does not exist")
	assertNoTempFiles(t, ts.Root())
}

// TestEditFileConcurrent checks that the per-path lock keeps concurrent edits
// of one file from losing each other's changes.
func TestEditFileConcurrent(t *testing.T) {
	ts := newTestToolset(t, Options{})
	const n = 32
	var initial strings.Builder
	for i := range n {
		fmt.Fprintf(&initial, "slot %d: empty\n", i)
	}
	path := filepath.Join(ts.Root(), "shared.txt")
	writeTestFile(t, path, initial.String())
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res := call(t, ts, "edit_file", map[string]any{
				"path":       "shared.txt",
				"old_string": fmt.Sprintf("slot %d: empty\n", i),
				"new_string": fmt.Sprintf("slot %d: done\n", i),
			})
			if res.IsError {
				t.Errorf("edit %d: %s", i, res.Output)
			}
		})
	}
	wg.Wait()
	if got := readTestFile(t, path); strings.Contains(got, "empty") {
		t.Fatalf("lost edits:\n%s", got)
	}
}

var assertNoTempFiles = workerstest.NoTempFiles
