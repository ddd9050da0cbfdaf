package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// A project file's text reaches the file tools through one door: Target's
// Read and Write for a file they change, RootDir.OpenText for one they
// show (workers/editorroute.go), which go to the editor when the session
// has one (ACP's fs/*) after every guard of the disk route. RootDir's
// OpenFile reads the disk alone: a tool that called it for a file's text
// would show the model the disk where the person's editor holds unsaved
// changes, and the editor's route would be forgotten there. These are the
// calls of it that may stay, each with why.
var diskReads = map[string]string{
	"search.go:Toolset.readSearchable": "search greps every file of the project on the disk: an editor offers no search, and a search shows matching lines, not a file to edit",
}

// TestFileToolsReadTextThroughTheDoor: no tool of this package opens a
// project file with RootDir.OpenFile but those diskReads allows.
func TestFileToolsReadTextThroughTheDoor(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, diskOpens(t, name, string(src))...)
	}
	for _, f := range found {
		if _, ok := diskReads[f]; !ok {
			t.Errorf("%s opens a project file with RootDir.OpenFile, which reads the disk even when an editor holds the file: read its text with RootDir.OpenText (or Target.Read), or add it to diskReads with why", f)
		}
	}
	for f := range diskReads {
		if !slices.Contains(found, f) {
			t.Errorf("diskReads names %s, which no longer calls RootDir.OpenFile: remove it", f)
		}
	}
}

// TestTextDoorGuardSeesAPlantedRead is the guard's self-test: a tool
// that reads a file's text with OpenFile is found, one that uses
// OpenText is not.
func TestTextDoorGuardSeesAPlantedRead(t *testing.T) {
	t.Parallel()
	src := `package tools

func (t *Toolset) sneaky(root *workers.RootDir, rel string) {
	f, _ := root.OpenFile(rel)
	f.Close()
}

func (t *Toolset) proper(ctx context.Context, root *workers.RootDir, rel string) {
	f, _ := root.OpenText(ctx, rel)
	f.Close()
}
`
	if got := diskOpens(t, "planted.go", src); len(got) != 1 || got[0] != "planted.go:Toolset.sneaky" {
		t.Errorf("found %q, want planted.go:Toolset.sneaky alone", got)
	}
}

// diskOpens lists, as file:function (methods as Type.Method), the
// functions of src that call X.OpenFile(rel) with one argument: RootDir's
// (os.OpenFile and afero's take three).
func diskOpens(t *testing.T, name, src string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		where := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				where = id.Name + "." + where
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) != 1 {
				return true
			}
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "OpenFile" {
				if w := name + ":" + where; !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
			return true
		})
	}
	return out
}
