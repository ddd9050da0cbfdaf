// Package workerstest holds what the tests of the tools (workers/tools)
// and of what they stand on (workers) share: calling a tool, checking its
// result, files in a test's project, and the walk of the module's Go files
// the guards read, as httptest serves the tests of HTTP code.
package workerstest

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers"
)

// Caller calls a tool by name: a tools.Toolset or a View of it.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) workers.Result
}

// Call runs a tool with arguments given as a Go value or a raw JSON
// string.
func Call(t testing.TB, c Caller, name string, args any) workers.Result {
	t.Helper()
	return CallCtx(context.Background(), t, c, name, args)
}

// CallCtx is Call with a context.
func CallCtx(ctx context.Context, t testing.TB, c Caller, name string, args any) workers.Result {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case nil:
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return c.Call(ctx, name, raw)
}

// MustOK fails the test unless res is a success, and returns its output.
func MustOK(t testing.TB, res workers.Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Output)
	}
	return res.Output
}

// MustErr fails the test unless res is an error containing want.
func MustErr(t testing.TB, res workers.Result, want string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an error result containing %q, got success: %s", want, res.Output)
	}
	if !strings.Contains(res.Output, want) {
		t.Fatalf("error result %q does not contain %q", res.Output, want)
	}
}

// WriteFile writes content to path, making its directories.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// NoTempFiles fails the test if a write left its temporary file under
// root.
func NoTempFiles(t testing.TB, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".ralph-write-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

// OutsideDir is a directory outside the project and outside the
// temporary directory (where t.TempDir lives, which the sandbox lets
// commands write).
func OutsideDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "ralph-outside-")
	if err != nil {
		t.Skipf("no directory outside the temporary directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if strings.HasPrefix(d, os.TempDir()) {
		t.Skip("/var/tmp is the temporary directory here")
	}
	return d
}

// ModuleGoFiles calls fn with each Go file of the module whose root is
// root, but tests, the end-to-end tests and third_party, by its path from
// the module root (with slashes) and its path on disk: the tree the
// guards read.
func ModuleGoFiles(t testing.TB, root string, fn func(rel, path string)) {
	t.Helper()
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "e2e" || rel == "third_party" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			fn(rel, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// StandInOnPath puts a program named name that does nothing and exits 0
// first on PATH for the test, and returns its path: a test about how a
// run is configured (an --agent claude) needs the agent's CLI to be
// found, not to run, on a machine without it.
func StandInOnPath(t testing.TB, name string) string {
	t.Helper()
	bin := t.TempDir()
	path := filepath.Join(bin, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return path
}
