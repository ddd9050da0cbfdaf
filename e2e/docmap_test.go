package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// architectureFolder is a backticked folder of the repository in
// docs/architecture.md (`coordinator/loop/machine`, `workers/`): lower-case
// path segments without dots, so that neither a Go name
// (`memory/git.Clone`) nor a pattern (`scripts/...`) is taken for one. A
// match counts as a folder only when its first segment is a top-level
// folder of the repository (docFolders), which leaves out protocol
// methods (`session/update`) and git refs (`refs/ralph/`).
var architectureFolder = regexp.MustCompile("`([a-z][a-z0-9_-]*(?:/[a-z0-9_-]+)*/?)`")

// docFolders are the folders a doc names in backticks, as paths from the
// repository's root, among the top-level folders tops.
func docFolders(doc string, tops map[string]bool) []string {
	var out []string
	for _, m := range architectureFolder.FindAllStringSubmatch(doc, -1) {
		top, _, _ := strings.Cut(m[1], "/")
		if strings.Contains(m[1], "/") && tops[top] {
			out = append(out, strings.TrimSuffix(m[1], "/"))
		}
	}
	return out
}

// topFolders are the repository's top-level folders.
func topFolders(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	tops := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			tops[e.Name()] = true
		}
	}
	return tops
}

// checkDocFolders fails t for every folder docs/architecture.md names
// that is not a folder of the repository (TestDocArchitecturePathsExist).
func checkDocFolders(t *testing.T, doc string) {
	t.Helper()
	folders := docFolders(doc, topFolders(t))
	for _, f := range folders {
		if fi, err := os.Stat(filepath.Join(moduleRoot, filepath.FromSlash(f))); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md names the folder %s, which is not one: %v", f, err)
		}
	}
	// The page names every package of ralph's: finding few means the
	// pattern stopped matching.
	if len(folders) < 40 {
		t.Fatalf("found only %d folders in docs/architecture.md; is the pattern still right?", len(folders))
	}
}

func TestDocFoldersPattern(t *testing.T) {
	t.Parallel()
	tops := map[string]bool{"memory": true, "workers": true, "scripts": true, "refs": false}
	got := docFolders("`memory/git` `workers/` `memory/git.Clone` `scripts/...` `session/update` `refs/ralph/` `memory` `workers/tools/tools.go` `Memory/Git`", tops)
	if strings.Join(got, " ") != "memory/git workers" {
		t.Errorf("folders = %q, want memory/git and workers", got)
	}
}

// rowFileDefs is a Go file of the "Where do I change X" table followed
// by the definitions it holds, in backticks within parentheses:
// `memory/planfile/tasks.go` (`ParseTasks`, `parseTaskLine`, the
// `TaskState` marks).
var rowFileDefs = regexp.MustCompile("`([a-z][A-Za-z0-9_-]*(?:/[A-Za-z0-9_.-]+)+\\.go)`\\s*\\(([^)]*)\\)")

// goName is a backticked Go name in a row's parentheses: a function,
// type, variable or constant, or a method as Type.Method.
var goName = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")

// changeRows are the rows of docs/architecture.md's "Where do I change
// X" table: what to change, and the cell saying where.
func changeRows(t *testing.T, doc string) [][2]string {
	t.Helper()
	_, table, ok := strings.Cut(doc, "## Where do I change X")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Where do I change X" section`)
	}
	if i := strings.Index(table, "\n## "); i >= 0 {
		table = table[:i]
	}
	var rows [][2]string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || strings.TrimSpace(cells[1]) == "to change" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		rows = append(rows, [2]string{strings.TrimSpace(cells[1]), cells[2]})
	}
	if len(rows) < 20 {
		t.Fatalf("found only %d rows in the table; is the parsing still right?", len(rows))
	}
	return rows
}

// goDefs are the names a Go file defines at its top level: functions,
// types, variables and constants by name, methods by name and as
// Type.Method.
func goDefs(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	defs := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			defs[d.Name.Name] = true
			if d.Recv != nil && len(d.Recv.List) == 1 {
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if idx, ok := recv.(*ast.IndexExpr); ok {
					recv = idx.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					defs[id.Name+"."+d.Name.Name] = true
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					defs[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						defs[n.Name] = true
					}
				}
			}
		}
	}
	return defs, nil
}

// TestDocArchitectureRowsNameWhatTheirFilesDefine keeps each row of the
// "Where do I change X" table right, not only its paths: every row names
// a Go file with, in parentheses after it, a definition the change starts
// at (`memory/planfile/tasks.go` (`ParseTasks`)), and every name so given
// is defined in that file. A function or table that moves to another
// file fails here, where a path check alone would still pass.
func TestDocArchitectureRowsNameWhatTheirFilesDefine(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range changeRows(t, string(doc)) {
		named := 0
		for _, m := range rowFileDefs.FindAllStringSubmatch(row[1], -1) {
			names := goName.FindAllStringSubmatch(m[2], -1)
			if len(names) == 0 {
				continue
			}
			defs, err := goDefs(filepath.Join(moduleRoot, filepath.FromSlash(m[1])))
			if err != nil {
				t.Errorf("row %q: %v", row[0], err)
				continue
			}
			for _, n := range names {
				named++
				if !defs[n[1]] {
					t.Errorf("row %q: %s defines no %s", row[0], m[1], n[1])
				}
			}
		}
		if named == 0 {
			t.Errorf("row %q names no definition of a Go file: write one after the file, as `memory/planfile/tasks.go` (`ParseTasks`)", row[0])
		}
	}
}
