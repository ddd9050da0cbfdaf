package workers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/workers/workerstest"
)

// programStarts are the calls that start a program, by import path and
// function name.
var programStarts = map[string][]string{
	"os/exec": {"Command", "CommandContext"},
	"os":      {"StartProcess"},
	"syscall": {"ForkExec", "Exec"},
}

// programSites are the files outside programs.go allowed to start a
// program, each with why: every other start goes through programs.go,
// which decides who could have written what it runs.
var programSites = map[string]string{
	// The model's commands and the verify commands: confined by the
	// sandbox's runner (or let out only as programs.go and the approval
	// of an unsandboxed command decide).
	"workers/command.go": "run_command and verify: the sandbox runner's front (execute)",
	// The sandbox itself.
	"workers/sandbox/runner_darwin.go": "sandbox-exec, the macOS sandbox",
	"workers/sandbox/kernel_linux.go":  "`true` in a new user namespace, to ask the kernel whether the sandbox can use one",
	"workers/sandbox/helper_linux.go":  "the sandbox's helper starting a confined command, or its reaper",
	"workers/sandbox/reaper_linux.go":  "the sandbox's reaper starting the confined command",
	// git is decided in memory/git: it runs no program named by a file
	// the model could write (trust.go).
	"memory/git/trust.go": "git, with the program keys of files the model could write kept out",
	// The person's chosen task tracker.
	"memory/beads/client.go": "bd, the task tracker the person chose (tracker = beads); it runs no project file",
	// ralph's own binaries.
	"scripts/mcpserve/ralph.go":      "ralph itself, for `ralph mcp serve`",
	"scripts/mcpserve/background.go": "ralph itself, a background `ralph run`",
	"scripts/cli/temporal.go":        "ralph-temporal and ralph itself",
	"scripts/cli/plan.go":            "ralph itself (a plan's run), and the person's $EDITOR on a plan file",
	"scripts/cli/doctor.go":          "`<agent CLI> --version`, which reads no settings and runs no hook",
	// Benchmarks and test programs, never part of ralph.
	"cmd/benchpeers/main.go":            "a benchmark of other agents, run by developers",
	"testdata/mcpserver/tools/tools.go": "the test MCP server",
}

// TestProgramsStartInOnePlace fails when a program is started outside
// programs.go and programSites: a new program ralph starts is a row of
// ProgramRules (and of docs/sandbox.md's threat table), or a site here
// with its reason.
func TestProgramsStartInOnePlace(t *testing.T) {
	var bad []string
	seen := map[string]bool{}
	workerstest.ModuleGoFiles(t, "..", func(rel, path string) {
		for _, site := range programStartsIn(t, path) {
			seen[rel] = true
			if rel == "workers/programs.go" || programSites[rel] != "" {
				continue
			}
			bad = append(bad, rel+":"+site)
		}
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s starts a program outside workers/programs.go; start it through programs.go (a row of ProgramRules), or add the file to programSites with the reason", b)
	}
	for site := range programSites {
		if !seen[site] {
			t.Errorf("programSites lists %s, which starts no program any more: take it off", site)
		}
	}
}

// programStartsIn lists the calls in the file at path that start a
// program, as "line: pkg.Func".
func programStartsIn(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := programStarts[p]; !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		p, ok := names[x.Name]
		if !ok {
			return true
		}
		for _, fn := range programStarts[p] {
			if sel.Sel.Name == fn {
				out = append(out, strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+x.Name+"."+fn)
			}
		}
		return true
	})
	return out
}
