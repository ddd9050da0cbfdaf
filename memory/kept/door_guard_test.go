package kept_test

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

// promptReaders are where ralph reads files whose text it puts into a
// request: the instructions files and their imports, the state files,
// skills, agent definitions, custom commands and their @ files, the
// person's @ mentions and pasted pictures, reviewers, a task's brief.
// A directory stands for every file in it (not below it); a file for
// itself. A new reader of a prompt is added here, and then reads through
// the door (memory/kept) or is a site of promptReadSites with its
// reason.
var promptReaders = []string{
	"coordinator/project/",
	"coordinator/instructions/",
	"coordinator/sessionhooks/",
	"coordinator/checkpoint/",
	"coordinator/review/",
	"coordinator/loop/",
	"coordinator/loop/taskprompt/",
	"memory/mentions/",
	"memory/skills/",
	"memory/statefiles.go",
	"scripts/slash/",
	"workers/agentdefs/",
}

// rawReads are the calls that read a file past the door, by import path
// and function name.
var rawReads = map[string][]string{
	"github.com/ralph-dev/ralph/memory/rootfs":  {"ReadSmall", "ReadHead", "ReadInstruction", "ReadListed", "OpenSmall"},
	"github.com/ralph-dev/ralph/workers/images": {"ReadFile"},
	"github.com/spf13/afero":                    {"ReadFile"},
	"os":                                        {"ReadFile", "Open", "OpenFile"},
}

// promptReadSites are the raw reads in promptReaders that send nothing
// to the model, or that the door judged just before, as "file:function",
// each with why.
var promptReadSites = map[string]string{
	"coordinator/sessionhooks/hooks.go:readPerson":         "the person's settings files, parsed for hooks and permission rules, never sent",
	"coordinator/sessionhooks/hooks.go:readProject":        "the project's settings files, parsed for hooks and permission rules, never sent",
	"coordinator/sessionhooks/hooks.go:review":             "a hook's script, hashed for the approval of its hook, never sent",
	"coordinator/sessionhooks/hookset.go:rulesLineNew":     "ralph's own record of the permission lines it said, never sent",
	"coordinator/checkpoint/tasklog.go:follow":             "ralph's own checkpoint log, parsed for the task view, never sent",
	"coordinator/instructions/promptimages.go:pastedImage": "a picture the person pasted, judged by p.Door.Refuses (its path and its target) just before",
	"coordinator/loop/taskprompt/taskprompt.go:Load":       "the prompt template the person names with --prompt-template, theirs and not the project's",
	"memory/statefiles.go:readMarkdown":                    "a state file ralph rewrites (a task ticked, a note added), never sent as read",
	"memory/statefiles.go:loadDoc":                         "the state files' reader, through the door whenever one is given (LoadStateDocs, Goals, RecentProgress); nil only for ralph's own rewrites",
	"scripts/slash/builtin.go:showFile":                    "a state file a built-in command prints to the person, never sent",
}

// TestPromptFilesGoThroughTheDoor fails when a file in promptReaders
// reads a file past the door (memory/kept) outside promptReadSites: the
// text it reads would reach the model without the kept list, the Read(…)
// deny rules or the credential mask, as @.git/config did through the
// instructions' imports (issue 88).
func TestPromptFilesGoThroughTheDoor(t *testing.T) {
	var bad []string
	seen := map[string]bool{}
	workerstest.ModuleGoFiles(t, "../..", func(rel, path string) {
		if !inPromptReaders(rel) {
			return
		}
		for _, r := range rawReadsIn(t, path, nil) {
			site := rel + ":" + r.fn
			seen[site] = true
			if promptReadSites[site] != "" {
				continue
			}
			bad = append(bad, rel+":"+strconv.Itoa(r.line)+": "+r.call+" in "+r.fn+" reads a file a request may hold past the door; read it through a *kept.Door, or add "+site+" to promptReadSites with the reason it sends nothing")
		}
	})
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	for site := range promptReadSites {
		if !seen[site] {
			t.Errorf("promptReadSites lists %s, which reads no file past the door any more: take it off", site)
		}
	}
}

// TestDoorGuardSeesARawRead: the guard finds a planted reader that reads
// past the door, whatever the packages' local names, and lets a read
// through a door pass.
func TestDoorGuardSeesARawRead(t *testing.T) {
	src := `package planted

import (
	"os"
	rf "github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

func importFile(fsys afero.Fs, door doorish, p string) {
	rf.ReadInstruction(fsys, p, nil, 1)
	afero.ReadFile(fsys, p)
	os.ReadFile(p)
	door.ReadImport(fsys, p, 1)
}

func (s *set) add() { _, _ = os.Open("x") }
`
	got := rawReadsIn(t, "planted.go", src)
	var calls []string
	for _, r := range got {
		calls = append(calls, r.fn+":"+r.call)
	}
	want := "importFile:rf.ReadInstruction|importFile:afero.ReadFile|importFile:os.ReadFile|add:os.Open"
	if strings.Join(calls, "|") != want {
		t.Errorf("the guard saw %q, want %q", calls, want)
	}
	if !inPromptReaders("memory/mentions/new.go") || inPromptReaders("memory/mentions/sub/x.go") || !inPromptReaders("memory/statefiles.go") || inPromptReaders("memory/lock.go") {
		t.Error("promptReaders' directories and files are not matched as listed")
	}
}

func inPromptReaders(rel string) bool {
	for _, p := range promptReaders {
		if strings.HasSuffix(p, "/") {
			if strings.HasPrefix(rel, p) && !strings.Contains(rel[len(p):], "/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// rawRead is one call of rawReads: its line, the call as written and
// the function it is in.
type rawRead struct {
	line     int
	call, fn string
}

// rawReadsIn lists the raw reads in the file at path (or in src).
func rawReadsIn(t *testing.T, path string, src any) []rawRead {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := rawReads[p]; !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var out []rawRead
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
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
			for _, fn := range rawReads[p] {
				if sel.Sel.Name == fn {
					out = append(out, rawRead{line: fset.Position(sel.Pos()).Line, call: x.Name + "." + fn, fn: fd.Name.Name})
				}
			}
			return true
		})
	}
	return out
}
