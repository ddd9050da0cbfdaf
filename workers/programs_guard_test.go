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
	"memory/git/trust.go": "git, found once off the project's PATH entries (childenv.Program), with the program keys of files the model could write kept out",
	// The person's chosen task tracker.
	"memory/beads/client.go": "bd, the task tracker the person chose (tracker = beads); it runs no project file",
	// ralph's own binaries.
	"scripts/mcpserve/ralph.go":      "ralph itself, for `ralph mcp serve`",
	"scripts/mcpserve/background.go": "ralph itself, a background `ralph run`",
	"scripts/temporal/temporal.go":   "ralph-temporal and ralph itself",
	"scripts/cli/plan.go":            "ralph itself (a plan's run), and the person's $EDITOR on a plan file",
	"scripts/doctor/doctor.go":       "`<agent CLI> --version` and `git --version`, found by childenv.Program, which read no settings and run no hook",
	// Benchmarks and test programs, never part of ralph.
	"cmd/benchpeers/main.go":                    "a benchmark of other agents, run by developers",
	"testdata/mcpserver/tools/tools.go":         "the test MCP server",
	"memory/git/gittest/gittest.go":             "git and bash in the tests' temporary repositories",
	"testdata/claude-code-transcript/record.go": "the real claude, by the path a developer gives, to record what Claude Code gives its hooks",
}

// bareNameSites are the files allowed to start a program by a bare name
// (exec.Command("sh", …)) or to look one up on PATH (exec.LookPath), each
// with why. Everywhere else a program ralph starts for itself is found
// once, off the project's PATH entries, by childenv.Program (the one
// resolver, memory/childenv/programs.go), and started by the absolute
// path it returns: an activated virtualenv or direnv puts the project's
// .venv/bin or bin/ first on PATH, and a git or claude the model wrote
// there would run as the person. Go's exec.ErrDot refuses only relative
// PATH entries.
var bareNameSites = map[string]string{
	"cmd/benchpeers/main.go":            "a benchmark of other agents, run by developers, never by ralph",
	"testdata/mcpserver/tools/tools.go": "the test MCP server's child `sleep`",
	"memory/git/gittest/gittest.go":     "bash in the tests' temporary repositories",
}

// TestProgramsStartInOnePlace fails when a program is started outside
// programs.go and programSites: a new program ralph starts is a row of
// ProgramRules (and of docs/sandbox.md's threat table), or a site here
// with its reason. It also fails on a program started by a bare name or
// looked up with exec.LookPath outside the one resolver (bareNameSites).
func TestProgramsStartInOnePlace(t *testing.T) {
	var bad []string
	seen, seenBare := map[string]bool{}, map[string]bool{}
	workerstest.ModuleGoFiles(t, "..", func(rel, path string) {
		starts, bare := programCallsIn(t, path, nil)
		for _, site := range starts {
			seen[rel] = true
			if rel == "workers/programs.go" || programSites[rel] != "" {
				continue
			}
			bad = append(bad, rel+":"+site+" starts a program outside workers/programs.go; start it through programs.go (a row of ProgramRules), or add the file to programSites with the reason")
		}
		for _, site := range bare {
			seenBare[rel] = true
			if bareNameSites[rel] != "" {
				continue
			}
			bad = append(bad, rel+":"+site+" finds a program on ralph's PATH, which may hold the project's directories; start the absolute path childenv.Program returns")
		}
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	for site := range programSites {
		if !seen[site] {
			t.Errorf("programSites lists %s, which starts no program any more: take it off", site)
		}
	}
	for site := range bareNameSites {
		if !seenBare[site] {
			t.Errorf("bareNameSites lists %s, which starts no program by a bare name any more: take it off", site)
		}
	}
}

// TestProgramsGuardCatchesABareName: the guard finds a planted
// bare-name start and a LookPath, whatever the package's local name, and
// lets an absolute path and a resolved variable through.
func TestProgramsGuardCatchesABareName(t *testing.T) {
	src := `package planted

import (
	"context"
	x "os/exec"
)

func f(ctx context.Context, p string) {
	x.Command("git", "status")
	x.CommandContext(ctx, "claude", "--version")
	x.LookPath("bd")
	x.Command("/bin/sh", "-c", "true")
	x.Command(p)
}
`
	starts, bare := programCallsIn(t, "planted.go", src)
	if len(starts) != 4 {
		t.Errorf("starts %q, want the four", starts)
	}
	want := []string{"9: x.Command(\"git\")", "10: x.CommandContext(\"claude\")", "11: x.LookPath"}
	if strings.Join(bare, "|") != strings.Join(want, "|") {
		t.Errorf("bare names %q, want %q", bare, want)
	}
}

// programCallsIn lists the calls in the file at path (or in src, when
// given) that start a program, as "line: pkg.Func", and those of them
// that find it on PATH: a bare name as the program, or exec.LookPath.
func programCallsIn(t *testing.T, path string, src any) (starts, bare []string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
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
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] == "os/exec" {
					line := strconv.Itoa(fset.Position(sel.Pos()).Line) + ": " + x.Name + "." + sel.Sel.Name
					arg := -1
					switch sel.Sel.Name {
					case "Command":
						arg = 0
					case "CommandContext":
						arg = 1
					case "LookPath":
						bare = append(bare, line)
					}
					if arg >= 0 && arg < len(call.Args) {
						if lit, ok := call.Args[arg].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if v, err := strconv.Unquote(lit.Value); err == nil && !strings.Contains(v, "/") {
								bare = append(bare, line+"("+lit.Value+")")
							}
						}
					}
				}
			}
		}
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
				starts = append(starts, strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+x.Name+"."+fn)
			}
		}
		return true
	})
	return starts, bare
}
