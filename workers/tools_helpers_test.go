package workers_test

import (
	"testing"

	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// The file tools are the simplest way to drive the resolution beneath the
// root that workers gives them, and what the tests below promise is what
// the model sees of it.

// fileTools are the tools of a project in a fresh temporary directory,
// closed with the test.
func fileTools(t testing.TB) *tools.Toolset {
	ts, err := tools.NewToolset(tools.Options{Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// The helpers the tests of workers share (workerstest), by the names
// these tests use.
var (
	mustOK            = workerstest.MustOK
	mustErr           = workerstest.MustErr
	writeTestFile     = workerstest.WriteFile
	readTestFile      = workerstest.ReadFile
	assertNoTempFiles = workerstest.NoTempFiles
)

// call runs a tool with arguments given as a Go value.
func call(t testing.TB, ts *tools.Toolset, name string, args any) workers.Result {
	t.Helper()
	return workerstest.Call(t, ts, name, args)
}
