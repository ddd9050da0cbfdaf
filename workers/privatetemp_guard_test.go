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

// Each session's private temporary directory (issue 88, cause 5) is an
// object every program ralph confines could reach: the model's commands
// and background commands, verify commands, hooks, git hooks and a
// project's MCP servers all start in the sandbox (Workspace.start), and
// the sandbox grants writing in one place per system, which passes over
// every session's private directory but the session's own: writeRules on
// Linux (Landlock, both sandboxes), SeatbeltProfile on macOS. A grant of
// writing made anywhere else is a new route to the other sessions'
// directories that skips that check.

// writeGrantSites are the functions allowed to grant writing, each with
// why, by "file:function".
var writeGrantSites = map[string]string{
	"workers/sandbox/secrets_linux.go:writeRules":               "Landlock's write grants: the spec's directories, around kept paths and other sessions' private directories",
	"workers/sandbox/helper_linux.go:restrict":                  "the harmless devices (/dev/null and the like), which are no directory",
	"workers/sandbox/seatbelt.go:SeatbeltProfile":               "Seatbelt's write grants: the root, the writable directories less other sessions' private ones, this session's own",
	"workers/sandbox/seatbelt.go:seatbeltBase":                  "the harmless devices in Seatbelt's base profile",
	"workers/sandbox/secrets_linux.go:readRules":                "reading only: the right to list directories (ReadDir)",
	"workers/sandbox/unixsock_helper_linux.go:resolveUnixRules": "connecting only: Landlock's resolve-unix right on the root and the allowed sockets",
}

// landlockGrants are go-landlock's calls that grant a file-system right
// on paths.
var landlockGrants = map[string]bool{"RWDirs": true, "RWFiles": true, "PathAccess": true}

// TestWritesAreGrantedInOnePlace: no Go file of ralph grants commands a
// right on paths (a go-landlock rule, a Seatbelt file-write allowance)
// outside the functions listed, so every program in the sandbox reaches
// the temporary directory through the check that keeps other sessions'
// private directories out.
func TestWritesAreGrantedInOnePlace(t *testing.T) {
	sites := writeGrantSites
	var bad []string
	seen := map[string]bool{}
	workerstest.ModuleGoFiles(t, "..", func(rel, path string) {
		for _, g := range writeGrantsIn(t, path, nil) {
			key := rel + ":" + g.fn
			seen[key] = true
			if sites[key] == "" {
				bad = append(bad, rel+":"+g.where+" grants commands a right on paths outside the sandbox's grant functions; grant it in writeRules (Linux) or SeatbeltProfile (macOS), which keep other sessions' private temporary directories out, or list the function in writeGrantSites with the reason")
			}
		}
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	for site := range sites {
		if !seen[site] {
			t.Errorf("writeGrantSites lists %s, which grants nothing any more: take it off", site)
		}
	}
}

// TestWriteGrantGuardCatchesAPlantedGrant: the guard finds a go-landlock
// grant under any local name of the package, and a Seatbelt allowance
// written as a string, in the function that makes it.
func TestWriteGrantGuardCatchesAPlantedGrant(t *testing.T) {
	src := `package planted

import ll "github.com/landlock-lsm/go-landlock/landlock"

func extra(dirs []string) []ll.Rule {
	return []ll.Rule{ll.RWDirs(dirs...)}
}

const profile = "(allow file-write* (subpath \"/tmp\"))"

func fine() string { return "nothing granted" }
`
	var got []string
	for _, g := range writeGrantsIn(t, "planted.go", src) {
		got = append(got, g.fn+"@"+g.where)
	}
	want := []string{"extra@6: RWDirs", "profile@9: \"(allow file-write* …\""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("found %q, want %q", got, want)
	}
}

// writeGrant is one grant the guard found: the function (or constant)
// it lies in, and where.
type writeGrant struct{ fn, where string }

// writeGrantsIn lists the grants in the file at path (or in src).
func writeGrantsIn(t *testing.T, path string, src any) []writeGrant {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/landlock-lsm/go-landlock/landlock" {
			local = "landlock"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	var out []writeGrant
	visit := func(fn string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && local != "" && id.Name == local && landlockGrants[sel.Sel.Name] {
					out = append(out, writeGrant{fn, strconv.Itoa(fset.Position(n.Pos()).Line) + ": " + sel.Sel.Name})
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(n.Value, "file-write") {
					out = append(out, writeGrant{fn, strconv.Itoa(fset.Position(n.Pos()).Line) + ": " + strings.TrimSpace(n.Value[:min(len(n.Value), 20)]) + " …\""})
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			visit(d.Name.Name, d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for i, v := range vs.Values {
						visit(vs.Names[min(i, len(vs.Names)-1)].Name, v)
					}
				}
			}
		}
	}
	return out
}
