package memory_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// stateFileNames are the task loop's files whose names are written once,
// as memory's constants, and taken from there everywhere else: a second
// spelling (ralph-temporal's list of files an attempt may not commit, a
// prompt's default plan name) is one a rename would miss.
var stateFileNames = map[string]string{
	memory.TasksFile:    "memory/statefiles.go",
	memory.ProgressFile: "memory/statefiles.go",
}

// TestStateFileNamesAreOneConstant fails on a Go string that is exactly
// RALPH_TASKS.md or RALPH_PROGRESS.md in a non-test file of ralph or
// ralph-temporal other than the one defining its constant. Prose that
// names the file (help text, a sentence of a prompt) is not a name to
// rename and is left alone: only a literal that is the whole name counts.
func TestStateFileNamesAreOneConstant(t *testing.T) {
	t.Parallel()
	workerstest.ModuleGoFiles(t, "..", func(rel, path string) {
		for _, at := range stateFileLiterals(t, path, nil) {
			if stateFileNames[at.name] != rel {
				t.Errorf("%s:%d spells %q; use memory's constant (%s)", rel, at.line, at.name, stateFileNames[at.name])
			}
		}
	})
}

// TestStateFileGuardFindsALiteral: the guard sees a planted literal, in
// a list or a constant, and not the name inside a sentence.
func TestStateFileGuardFindsALiteral(t *testing.T) {
	t.Parallel()
	src := `package planted

var files = []string{"RALPH_TASKS.md", "notes.md"}

const progress = "RALPH_PROGRESS.md"

var help = "work through RALPH_TASKS.md"
`
	got := stateFileLiterals(t, "planted.go", src)
	if len(got) != 2 || got[0].line != 3 || got[1].line != 5 {
		t.Fatalf("found %+v, want the literals on lines 3 and 5", got)
	}
}

type stateFileLiteral struct {
	name string
	line int
}

// stateFileLiterals lists the string literals of a Go file (src, or the
// file at path when src is nil) that are a state file's whole name.
func stateFileLiterals(t *testing.T, path string, src any) []stateFileLiteral {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []stateFileLiteral
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && stateFileNames[s] != "" {
			found = append(found, stateFileLiteral{name: s, line: fset.Position(lit.Pos()).Line})
		}
		return true
	})
	return found
}
