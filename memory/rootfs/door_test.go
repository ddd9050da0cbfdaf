package rootfs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The door's guard: in this package, every open of a file goes through
// door.go (openIn for a project's files, openPerson for the person's),
// which never waits and takes only a regular file. A call that opens
// (os.Open, os.OpenFile, openNoFollow, or Open and OpenFile on anything
// but the method's own receiver, which is the door again) elsewhere fails
// TestEveryOpenGoesThroughTheDoor: route it through the door, or list it
// in doorAllowed with why it cannot wait on a FIFO ralph would write.

// doorAllowed are the opens outside door.go, as "file:function", each
// with why.
var doorAllowed = map[string]string{
	"person.go:PersonFs.OpenFile":   "os.OpenFile for reading only: the person's own files, read by ralph's small reader (ReadSmall) with O_NONBLOCK and a regular-file check",
	"exchange.go:PersonFs.Exchange": "os.Open of the person's directory, to rename in it; a directory, never a FIFO",
	"person_unix.go:openNoFollow":   "the open under openPerson, which door.go calls with O_NONBLOCK",
	"person_other.go:openNoFollow":  "the open under openPerson, which door.go calls with O_NONBLOCK",
	"small.go:openNonBlocking":      "the small reader's open through any afero.Fs, with O_NONBLOCK; a rootfs.Fs behind it is the door",
	"projects.go:Projects.Open":     "routes to a project's Fs, whose OpenFile is the door",
	"projects.go:Projects.OpenFile": "routes to a project's Fs, whose OpenFile is the door",
	"door.go:openIn":                "the door",
	"door.go:openPerson":            "the door",
}

// doorOpens are the opens of src (a file of this package named rel) made
// outside the door, as "file:function".
func doorOpens(rel string, src []byte) ([]string, error) {
	file, err := parser.ParseFile(token.NewFileSet(), rel, src, 0)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, decl := range file.Decls {
		recv := ""
		name := funcName(decl)
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List[0].Names) > 0 {
			recv = fd.Recv.List[0].Names[0].Name
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			opens := false
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				opens = fn.Name == "openNoFollow"
			case *ast.SelectorExpr:
				if fn.Sel.Name == "Open" || fn.Sel.Name == "OpenFile" {
					x, isIdent := fn.X.(*ast.Ident)
					opens = !isIdent || x.Name != recv || recv == ""
				}
			}
			if opens {
				found = append(found, rel+":"+name)
			}
			return true
		})
	}
	return found, nil
}

// TestEveryOpenGoesThroughTheDoor: no open of this package's files is
// made outside door.go but those doorAllowed lists.
func TestEveryOpenGoesThroughTheDoor(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		found, err := doorOpens(p, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			if _, ok := doorAllowed[f]; !ok {
				t.Errorf("%s opens a file outside the door (door.go): route it through openIn or openPerson, which never wait and take only a regular file", f)
			}
		}
	}
}

// TestDoorGuardCatchesAPlantedOpen: the guard sees a raw open of a
// project's file, an open of os.Root's, and one through a value that is
// not the method's receiver; the receiver's own door passes.
func TestDoorGuardCatchesAPlantedOpen(t *testing.T) {
	src := []byte(`package rootfs
func (f *Fs) appendProgress(name string) error {
	_, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	return err
}
func (f *Fs) rawRoot(d *os.Root) { d.OpenFile("x", os.O_RDONLY, 0) }
func (f *Fs) viaDoor() { f.OpenFile("x", os.O_RDONLY, 0) }
func plain() { openNoFollow("x", 0, 0) }
`)
	found, err := doorOpens("planted.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"planted.go:Fs.appendProgress", "planted.go:Fs.rawRoot", "planted.go:plain"}
	if !slices.Equal(found, want) {
		t.Fatalf("the guard found %v, want %v", found, want)
	}
}
