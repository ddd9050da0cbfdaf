package git

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A checkpoint's objects sit under refs/ralph, where the model's commands
// may read them with git show; a file the session's door refuses (a
// Read(…) deny rule's, a kept one) must never be taken in. The paths a
// checkpoint takes from the work tree are chosen in the routes below, and
// each passes them through withhold; the forwarders stage only what a
// route handed them. A new way of staging a path into a checkpoint fails
// this guard until it is one of the two.

// withholdRoutes are the methods of *Checkpoints that choose which work
// tree files enter a checkpoint, each of which calls withhold.
var withholdRoutes = map[string]string{
	"(*Checkpoints).take":       "the status's paths and the paths the tools named, staged into ralph's index (update, add)",
	"(*Checkpoints).rawDiffers": "the files whose bytes on disk a raw tree keeps, hashed with hash-object -w (every tracked file, for a baseline)",
	"(*Checkpoints).quickTake":  "the paths the tools named, hashed into a tree built from the latest one, their entries set in ralph's index later (behind.go)",
	// A path the door refuses sends the checkpoint the status's way.
	"(*Checkpoints).recordRestored": "the paths an undo's restore wrote, staged into ralph's index (update)",
}

// withholdForwarders stage only the paths their caller hands them; they
// may be called from a route or another forwarder alone.
var withholdForwarders = map[string]string{
	"(*Checkpoints).add":              "take's paths, by git add",
	"(*Checkpoints).addNamed":         "take's named paths, by update-index (update) or git add (add)",
	"(*Checkpoints).update":           "take's paths, by update-index",
	"(*Checkpoints).updateEachNested": "add's nested repositories, one by one",
}

// otherStagers stage paths of a work tree into something that is no
// checkpoint, each with why the door is not theirs to hold.
var otherStagers = map[string]string{
	"(*Repo).addPaths":       "a task's commit of the model's own work on its branch (taskcommit.go): the person's history, not refs/ralph",
	"(*Repo).addAll":         "a task's commit and the snapshot of its unfinished work, in the task's own work tree, which holds no untracked file of the person's",
	"(*Repo).updateGitlinks": "nested repositories' HEAD commits for addPaths and addAll: a commit name, no file's content",
}

// stagerSinks are the string literals of a git command that takes work
// tree files in: update-index --add, git add -A, hash-object's paths.
var stagerSinks = []string{"--add", "-A", "--stdin-paths"}

// withholdViolations reads the Go files (name to source) and says every
// way a path reaches a checkpoint without the door's filter.
func withholdViolations(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	var bad []string
	seen := map[string]bool{}
	for name, src := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			fname := funcName(fn)
			recv := ""
			if fn.Recv != nil && len(fn.Recv.List) > 0 && len(fn.Recv.List[0].Names) > 0 {
				recv = fn.Recv.List[0].Names[0].Name
			}
			stages, withholds := false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && slices.Contains(stagerSinks, v) {
						stages = true
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						break
					}
					if id, ok := sel.X.(*ast.Ident); !ok || id.Name != recv || !strings.HasPrefix(fname, "(*Checkpoints).") {
						break
					}
					if sel.Sel.Name == "withhold" {
						withholds = true
					}
					if withholdForwarders["(*Checkpoints)."+sel.Sel.Name] != "" {
						stages = true
					}
				}
				return true
			})
			seen[fname] = true
			switch {
			case withholdRoutes[fname] != "":
				if !withholds {
					bad = append(bad, name+" "+fname+" chooses a checkpoint's paths without withhold")
				}
			case !stages || withholdForwarders[fname] != "":
			case strings.HasPrefix(fname, "(*Checkpoints)."):
				bad = append(bad, name+" "+fname+" stages paths into a checkpoint without withhold, and is no route or forwarder of withholdRoutes")
			case otherStagers[fname] == "":
				bad = append(bad, name+" "+fname+" stages work tree files: a checkpoint route (withholdRoutes) or another (otherStagers)?")
			}
		}
	}
	for name := range withholdRoutes {
		if !seen[name] {
			bad = append(bad, name+" is a route of withholdRoutes that is gone: the table is stale")
		}
	}
	slices.Sort(bad)
	return bad
}

// TestEveryCheckpointRouteWithholdsWhatTheDoorRefuses is the guard over
// memory/git's own files.
func TestEveryCheckpointRouteWithholdsWhatTheDoorRefuses(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	for _, v := range withholdViolations(t, files) {
		t.Error(v)
	}
}

// The guard's self-test: a route that lost its withhold, a new method
// that stages paths by update and one that hashes files by hash-object,
// and a new stager outside the checkpoints are each found; the routes as
// they should be are not.
func TestWithholdGuardFindsAPlantedViolation(t *testing.T) {
	t.Parallel()
	planted := map[string][]byte{"planted.go": []byte(`package git
func (c *Checkpoints) take(paths []string) { c.update(nil, nil, c.withhold(paths), 0, nil) }
func (c *Checkpoints) rawDiffers(paths []string) { _ = "--stdin-paths" }
func (c *Checkpoints) sneak(paths []string) { c.update(nil, nil, paths, 0, nil) }
func (c *Checkpoints) hash(paths []string) { runCmd(nil, 0, false, "", nil, nil, "hash-object", "-w", "--stdin-paths") }
func (r *Repo) stageMore() { r.Git(nil, nil, "add", "-A") }
func (c *Checkpoints) update(paths []string) { _ = "--add" }
`)}
	got := withholdViolations(t, planted)
	want := []string{"(*Checkpoints).rawDiffers chooses", "(*Checkpoints).sneak stages", "(*Checkpoints).hash stages", "(*Repo).stageMore stages"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, w) }) {
			t.Errorf("the guard missed %q; it said:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, ").take ") || strings.Contains(v, ").update ") }) {
		t.Errorf("the guard blamed a route as it should be:\n%s", strings.Join(got, "\n"))
	}
}
