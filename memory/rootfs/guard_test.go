package rootfs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The guard: ralph's own files under a project go through this package's
// door, so no other non-test file of the repository (ralph-temporal, a
// module of its own, included) may make a raw file call. What is not a
// project path (the kernel's /proc, a terminal, the person's own
// directories, git's admin files read as git reads them, the sandbox's
// own guard of .git and .ralph/config.toml) is allowed by file and
// function below, each with why. A new raw call fails this test: route
// it through the door (New, or Person for the person's own directories),
// or add it here with its reason.

// rawCalls are the calls the guard forbids, by import path.
var rawCalls = map[string][]string{
	"os":                     {"Open", "OpenFile", "ReadFile", "WriteFile", "Create", "Rename", "Remove", "RemoveAll", "MkdirAll", "Symlink", "Truncate", "Chmod", "DirFS"},
	"github.com/spf13/afero": {"NewOsFs", "NewBasePathFs"},
}

// skippedDirs hold no shipped code that touches a project: helper
// programs of the tests and the build, fixtures, patched third-party
// copies, the end-to-end tests.
var skippedDirs = []string{"cmd", "testdata", "third_party", "e2e", "node_modules", ".git"}

// allowed are the raw calls that touch no project path, as
// "file:function" (methods as Type.Method, package-level code as
// "(file)"), each with why.
var allowed = map[string]string{
	// The control socket lives in the person's runtime or state
	// directory, never in the project (coordinator/control/socket.go).
	"coordinator/control/server.go:Bind":           "the control socket's directory, in the runtime or state dir",
	"coordinator/control/server.go:removeOwn":      "the control socket itself, in the runtime or state dir",
	"coordinator/control/socket.go:makeSocketDir":  "the runtime or state dir that holds the control socket",
	"coordinator/control/socket_unix.go:ownerOnly": "chmod of the control socket, in the runtime or state dir",
	"coordinator/control/find.go:sockets":          "the control sockets of the project's ralphs, listed and the dead ones removed in the runtime or state dir",
	"coordinator/control/peer_linux.go:noNewPrivs": "/proc/<pid>/status of the peer of the control socket",
	// Fixtures and tools.
	"coordinator/llm/llmtest/scenario.go:LoadScenario": "the stand-in model's scenario file, named by a test",
	"coordinator/llm/llmtest/replay.go:readRecording":  "a recorded model response the stand-in replays (testdata/anthropic), named by a test",
	"workers/workerstest/workerstest.go:WriteFile":     "a test's own file, in its temporary directory",
	"workers/lsp/lsptest/fake.go:probeWrite":           "the fake language server's attempt on a test project's .git/config, which the sandbox must refuse",
	"workers/workerstest/workerstest.go:ReadFile":      "a test's own file, in its temporary directory",
	"workers/workerstest/workerstest.go:OutsideDir":    "a test's directory outside the temporary one",
	"workers/workerstest/workerstest.go:StandInOnPath": "a test's stand-in program, in its temporary directory",
	"workers/workerstest/hooks.go:HookSet":             "a test's hook scripts, in a temporary directory outside its project",
	"profile.go:profiled":                              "the profile file the person names in RALPH_CPUPROFILE",
	"main.go:memstats":                                 "the file the person names in RALPH_MEMSTATS",
	// The CLAUDE_ENV_FILE ralph makes for SessionStart hooks, in a new
	// directory of its own in the temporary directory, never the project.
	"workers/envfile.go:Workspace.NewEnvFile": "the CLAUDE_ENV_FILE ralph makes in a new directory of the temporary directory",
	"workers/envfile.go:TakeEnvFile":          "the CLAUDE_ENV_FILE ralph made, read once (not through a link) and removed with its directory",
	// The kernel's files.
	"memory/diskfull_linux.go:mountOf":              "/proc/self/mountinfo",
	"memory/git/packtemps_linux.go:inGroup":         "/proc/<pid>/stat, to find the processes of ralph's own repack",
	"memory/git/packtemps_linux.go:writable":        "/proc/<pid>/fdinfo/<fd> of ralph's own repack, for the files it writes",
	"memory/git/watch_linux.go:blockedOnSpecial":    "/proc/<pid>/wchan, stack and fd of a git ralph started, to see it blocked on a FIFO",
	"memory/git/watch_linux.go:syscallArgs":         "/proc/<pid>/syscall of a git ralph started",
	"memory/git/watch_linux.go:openedPath":          "/proc/<pid>/mem of a git ralph started, for the path its blocked open names",
	"memory/lock_linux.go:(file)":                   "/proc/sys/kernel/random/boot_id",
	"memory/lock_linux.go:procStat":                 "/proc/<pid>/stat",
	"memory/lock_holder_linux.go:lockHolder":        "/proc/locks, to find who holds the project's lock",
	"workers/escaped_linux.go:agentProcesses":       "/proc, to find an agent's escaped processes",
	"workers/escaped_linux.go:readProc":             "/proc/<pid> files",
	"workers/escaped_linux.go:reapGroup":            "/proc, to reap a process group",
	"workers/procgroup_linux.go:ProcessAlive":       "/proc/<pid>/stat",
	"workers/procgroup_linux.go:groupHasLiveMember": "/proc, a process group's members",
	"workers/proctree/proctree_linux.go:ParentPID":  "/proc/<pid>/stat",
	"workers/proctree/memory_linux.go:status":       "/proc/<pid>/status",
	"workers/proctree/freeze_linux.go:readThreads":  "/proc/<pid>/task/<tid>/status",
	"workers/proctree/freeze_linux.go:inClone":      "/proc/<pid>/task/<tid>/syscall",
	"workers/proctree/freeze_linux.go:readStat":     "/proc/<pid>/stat",
	"workers/proctree/freeze_linux.go:procNames":    "/proc and /proc/<pid>/task listed",
	"workers/proctree/freeze_linux.go:noChildren":   "/proc/<pid>/task/<tid>/children and the thread's directory",
	"workers/sandbox/kernel_linux.go:sysctl":        "/proc/sys",
	"workers/sandbox/reaper_linux.go:childrenOf":    "/proc/<pid>/task/*/children",
	"workers/sandbox/reaper_linux.go:statOf":        "/proc/<pid>/stat",
	"workers/sandbox/unixdiag_linux.go:mountDevice": "/proc/self/mountinfo",
	"workers/sandbox/unixdiag_linux.go:threadGroup": "/proc/<pid>/status",
	"workers/sandbox/server_linux.go:server.start":  "/dev/null for the sandbox helper's standard streams",
	// memory/git reads git's admin files (.git/index, HEAD, config,
	// commondir, a .git file) and writes the session's own index files
	// through this package's door (memory/git/gitdoor.go), its trust
	// records through the person's door, and leaves task worktrees to
	// git itself: no entry here.
	// The sandbox's own guard of .git/hooks, .git/config and
	// .ralph/config.toml in the fallback: it restores the person's copies
	// (Lstat'd, links replaced, never followed) after each command.
	"workers/sandbox/restore.go:guardedState.end":       "restores guarded files after a command",
	"workers/sandbox/restore.go:put":                    "restores one guarded file, replacing a link",
	"workers/sandbox/restore.go:record":                 "records a guarded file before a command",
	"workers/sandbox/restore.go:remove":                 "removes what a command added at a guarded path",
	"workers/sandbox/nestedgit.go:nestedGuard.remember": "the guard of nested repositories' config",
	"workers/sandbox/nestedgit.go:nestedGuard.takeBack": "the guard of nested repositories' config",
	"workers/sandbox/nestedgit.go:replaceFile":          "the guard of nested repositories' config",
	"workers/sandbox/runner_linux.go:Process.Wait":      "removes mount points the sandbox made where nothing was",
	// The person's own files and directories outside any project.
	"scripts/web/index.go:watchDir":                  "the registry dir in the person's state dir",
	"scripts/cli/ask.go:openTTY":                     "/dev/tty",
	"scripts/cli/plan.go:editFile":                   "/dev/tty for the person's editor",
	"scripts/cli/cli.go:cli.addConversationCommands": "ralph script FILE: a file the person names",
	"scripts/cli/cli.go:cli.addRecordCommands":       "ralph tasks import FILE: a file the person names",
	"scripts/cli/schemaflag.go:readSchemaFile":       "--output-schema FILE: a file the person names",
	"scripts/mcpserve/background.go:startRun":        "the started run's log, a temporary file of its own",
	// ralph-temporal: the worker's own directories (its clones and
	// worktrees, outside any person's project) and its start file.
	"ralph-temporal/commands.go:readStart":              "the start document ralph hands ralph-temporal",
	"ralph-temporal/engine/gitops.go:clone":             "the worker's clone directory and its info/exclude",
	"ralph-temporal/engine/gitops.go:repoDirs.worktree": "the worker's worktree directory",
	"ralph-temporal/engine/worker.go:RunWorker":         "the worker's own work directory",
}

// findRawCalls parses one Go file and returns its raw file calls as
// "rel:function".
func findRawCalls(rel string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string][]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		calls, ok := rawCalls[path]
		if !ok {
			continue
		}
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = calls
	}
	var found []string
	for _, decl := range f.Decls {
		fn := funcName(decl)
		ast.Inspect(decl, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && slices.Contains(names[id.Name], sel.Sel.Name) {
				if e := rel + ":" + fn; !slices.Contains(found, e) {
					found = append(found, e)
				}
			}
			return true
		})
	}
	return found, nil
}

// funcName names decl as the allow-list does.
func funcName(decl ast.Decl) string {
	fd, ok := decl.(*ast.FuncDecl)
	if !ok {
		return "(file)"
	}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// repoRawCalls walks the repository from root and returns every raw file
// call outside this package.
func repoRawCalls(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (slices.Contains(skippedDirs, d.Name()) || rel == "memory/rootfs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		calls, err := findRawCalls(rel, src)
		if err != nil {
			return err
		}
		found = append(found, calls...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestNoRawFileCallsOutsideTheDoor(t *testing.T) {
	found := repoRawCalls(t, filepath.Join("..", ".."))
	if len(found) < 10 {
		t.Fatalf("the guard found only %d raw calls: is it looking at the repository?", len(found))
	}
	for _, c := range found {
		if _, ok := allowed[c]; !ok {
			t.Errorf("%s makes a raw file call: go through memory/rootfs (New for a project's files, Person for the person's own), or add it to the guard's allow-list with why it is no project path", c)
		}
	}
	for c := range allowed {
		if !slices.Contains(found, c) {
			t.Errorf("the guard's allow-list names %s, which makes no raw file call any more: remove it", c)
		}
	}
}

// TestGuardCatchesAPlantedCall: a raw write of a state file, as ralph
// made them before the door, is found and is not allowed; so is a raw
// open of .git/index, as the checkpoint's seed made it before the git
// dir's door (issue 66).
func TestGuardCatchesAPlantedCall(t *testing.T) {
	src := []byte(`package memory

import (
	"os"
	fsys "github.com/spf13/afero"
)

func appendProgress(root string, entry []byte) error {
	return os.WriteFile(root+"/RALPH_PROGRESS.md", entry, 0o644)
}

func (s *Session) open() fsys.Fs { return fsys.NewOsFs() }
`)
	found, err := findRawCalls("memory/planted.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory/planted.go:appendProgress", "memory/planted.go:Session.open"}
	plantedGit := []byte(`package git

import (
	"io"
	"os"
	"path/filepath"
)

// seedIndex as it was before the git dir's door: a link a command
// planted at .git/index had the person's key copied into the session.
func (c *Checkpoints) seedIndex() error {
	src, err := os.Open(filepath.Join(c.repo.GitDir, "index"))
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(c.index, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return err
}
`)
	gitFound, err := findRawCalls("memory/git/checkpoint.go", plantedGit)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gitFound, []string{"memory/git/checkpoint.go:Checkpoints.seedIndex"}) {
		t.Fatalf("a raw open of .git/index: found %q", gitFound)
	}
	if _, ok := allowed[gitFound[0]]; ok {
		t.Fatalf("%s, a raw open of a project path, is allowed", gitFound[0])
	}
	if !slices.Equal(found, want) {
		t.Fatalf("found %q, want %q", found, want)
	}
	for _, c := range found {
		if _, ok := allowed[c]; ok {
			t.Fatalf("%s is allowed", c)
		}
	}
}
