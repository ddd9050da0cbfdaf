//go:build unix

package memory

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// stateFileCalls are the package's calls that open a project's state
// files, each run against a project with a FIFO at one of them.
var stateFileCalls = map[string]func(fs afero.Fs, root string){
	"LoadStateDocs":  func(fs afero.Fs, root string) { _, _ = LoadStateDocs(nil, fs, root, 1<<10, 1<<10) },
	"AppendProgress": func(fs afero.Fs, root string) { _ = AppendProgress(fs, root, ProgressEntry{Title: "t"}) },
	"RecentProgress": func(fs afero.Fs, root string) { _, _ = RecentProgress(nil, fs, root, 1<<10) },
	"ReadProgress":   func(fs afero.Fs, root string) { _, _ = ReadProgress(fs, root) },
	"Goals":          func(fs afero.Fs, root string) { _, _ = Goals(nil, fs, root, 1<<10) },
	"AppendLearning": func(fs afero.Fs, root string) { _ = AppendLearning(fs, root, "a note", time.Now()) },
	"InitProject":    func(fs afero.Fs, root string) { _, _ = InitProject(fs, root, time.Now()) },
	"EnsureStateDir": func(fs afero.Fs, root string) { _ = EnsureStateDir(fs, root) },
	"DetectProject":  func(fs afero.Fs, root string) { DetectProject(fs, root) },
	"ReadLock":       func(fs afero.Fs, root string) { _, _, _ = ReadLock(fs, root) },
	"LockHolder": func(fs afero.Fs, root string) {
		if h, err := LockHolder(fs, root); err == nil {
			h.Close()
		}
	},
	"AcquireLock": func(fs afero.Fs, root string) {
		if l, err := AcquireLock(fs, root, "", false); err == nil {
			l.Release()
		}
	},
	"LoadState":        func(fs afero.Fs, root string) { _, _ = LoadState(fs, root) },
	"LoadSessionState": func(fs afero.Fs, root string) { _, _ = LoadSessionState(fs, root, "s1") },
	"FindSession":      func(fs afero.Fs, root string) { _, _ = FindSession(fs, root, "") },
	"OpenSession": func(fs afero.Fs, root string) {
		if s, _, err := OpenSession(fs, root, "s1"); err == nil {
			_ = s.SaveState(func(st *State) { st.Status = "done" })
			_ = s.Close()
		}
	},
	"CreateSession": func(fs afero.Fs, root string) {
		if s, err := CreateSession(fs, root, "s2", State{}); err == nil {
			_ = s.SaveState(func(st *State) { st.Status = "done" })
			_ = s.Close()
		}
	},
}

// TestNoStateFileCallWaitsOnAFIFO: with a FIFO (which nobody opens from
// the other side) at each of WrittenStateFiles and at a session's own
// record, every call of stateFileCalls returns within seconds, through
// the project's door.
func TestNoStateFileCallWaitsOnAFIFO(t *testing.T) {
	t.Parallel()
	targets := append(WrittenStateFiles(), filepath.Join(SessionsDir, "s1", "session.json"))
	for _, target := range targets {
		for name, call := range stateFileCalls {
			t.Run(strings.ReplaceAll(target, "/", "_")+"/"+name, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				door, err := rootfs.New(root)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = door.Close() })
				s, err := CreateSession(door, root, "s1", State{})
				if err != nil {
					t.Fatal(err)
				}
				_ = s.SaveState(func(st *State) { st.Status = "running" })
				_ = s.Close()
				path := filepath.Join(root, target)
				_ = os.Remove(path)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Skip("no FIFOs here:", err)
				}
				done := make(chan struct{})
				go func() { defer close(done); call(door, root) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					// Open the FIFO's other side so that the call, and the
					// test, can end.
					f, _ := os.OpenFile(path, os.O_RDWR, 0)
					if f != nil {
						defer f.Close()
					}
					t.Fatalf("%s waited on a FIFO at %s", name, target)
				}
			})
		}
	}
}

// stateFileConsts are the constants of the package's files named …File
// whose value is a project's path: a state file's name.
func stateFileConsts(rel string, src []byte) ([]string, error) {
	file, err := parser.ParseFile(token.NewFileSet(), rel, src, 0)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if !id.IsExported() || !strings.HasSuffix(id.Name, "File") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				if strings.HasPrefix(v, StateDir+"/") || strings.HasSuffix(v, ".md") {
					found = append(found, v)
				}
			}
		}
	}
	return found, nil
}

// TestWrittenStateFilesAreListed: every state file the package names is
// in WrittenStateFiles, so the FIFO test plants one there.
func TestWrittenStateFilesAreListed(t *testing.T) {
	paths, _ := filepath.Glob("*.go")
	listed := WrittenStateFiles()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		names, err := stateFileConsts(p, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !slices.Contains(listed, filepath.FromSlash(n)) {
				t.Errorf("%s names the state file %s, which WrittenStateFiles does not list: list it, so that a FIFO is planted there", p, n)
			}
		}
	}
}

// TestStateFileGuardSeesAPlantedFile: a new constant naming a state file
// is found, and one that is not a project path is not.
func TestStateFileGuardSeesAPlantedFile(t *testing.T) {
	src := []byte("package memory\nconst (\n\tPlanFile = \"RALPH_PLAN.md\"\n\tQueueFile = \".ralph/queue.json\"\n\tMaxQueueFile = 1 << 20\n\tkeyFile = \".ralph/k\"\n\tOtherFile = \"links.json\"\n)\n")
	found, err := stateFileConsts("planted.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"RALPH_PLAN.md", ".ralph/queue.json"}; !slices.Equal(found, want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	if slices.Contains(WrittenStateFiles(), "RALPH_PLAN.md") {
		t.Fatal("the planted file is listed")
	}
}
