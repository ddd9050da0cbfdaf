package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// taskCommitWords are git's subcommands of a task's commit. The engine
// makes that commit through memory/git (Repo.CommitWork, Repo.Push), the
// one task commit the local loop makes too; a git command of its own
// starting with one of these is the sequence written a second time.
var taskCommitWords = map[string]bool{"add": true, "commit": true, "push": true}

// TestTheEngineCommitsThroughMemoryGit fails when a non-test file of the
// engine runs git add, commit or push itself (through runGit, gitOut or
// memory/git's RemoteCommand) instead of through memory/git's task
// commit.
func TestTheEngineCommitsThroughMemoryGit(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		for _, at := range ownTaskCommits(t, name, nil) {
			t.Errorf("%s runs git %s itself; commit and push through memory/git (Repo.CommitWork, Repo.Push)", at, at[strings.LastIndex(at, " ")+1:])
		}
	}
}

// TestTheEngineGitGuardSees: the guard finds a planted commit and push,
// and lets a worktree add and a merge through.
func TestTheEngineGitGuardSees(t *testing.T) {
	t.Parallel()
	src := `package engine

func f() {
	runGit(ctx, dir, "commit", "-m", "x")
	rgit.RemoteCommand(ctx, dir, nil, "push", "origin")
	runGit(ctx, dir, "worktree", "add", wt)
	runGit(ctx, dir, "merge", "--no-ff", ref)
}
`
	got := ownTaskCommits(t, "planted.go", src)
	if len(got) != 2 || got[0] != "planted.go:4 commit" || got[1] != "planted.go:5 push" {
		t.Fatalf("found %q", got)
	}
}

// ownTaskCommits lists, as "file:line word", the git commands of a Go
// file (src, or the file at name when src is nil) whose subcommand, the
// first string literal they are given, is one of taskCommitWords.
func ownTaskCommits(t *testing.T, name string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !runsGit(call.Fun) {
			return true
		}
		for _, arg := range call.Args {
			lit, ok := arg.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			if word, err := strconv.Unquote(lit.Value); err == nil && taskCommitWords[word] {
				found = append(found, name+":"+strconv.Itoa(fset.Position(call.Pos()).Line)+" "+word)
			}
			break // only the subcommand counts
		}
		return true
	})
	return found
}

// runsGit reports whether fun is one of the ways the engine runs git.
func runsGit(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "runGit" || f.Name == "gitOut"
	case *ast.SelectorExpr:
		return f.Sel.Name == "RemoteCommand"
	}
	return false
}
