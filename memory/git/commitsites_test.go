package git

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// indexSites are the functions of memory/git that hand git an index of
// their own choosing (a "GIT_INDEX_FILE=" literal), each with why that
// index may be where it is. A commit on a branch is built only in
// ralph's own index (commitindex.go), which lies where no command can
// write; every other index is a checkpoint's or undo's, whose commits
// live under refs/ralph and which no hook of the person's judges.
var indexSites = map[string]string{
	"commitindex.go (*commitIndex).env":   "ralph's own index for a commit, in its state directory, which no command can write",
	"commitindex.go (*Repo).treeOf":       "a hook's copy as ralph read it back through the door, rewritten in ralph's own private directory, whose tree is what is committed",
	"hooks.go (*Repo).commitHooks":        "the hooks' copy of ralph's own index, in the temporary directory commands write: handed to the hooks, never committed from (judge takes its tree back)",
	"checkpoint.go (*Checkpoints).record": "the session's checkpoint index (.ralph/sessions/<id>/git-index): a checkpoint under refs/ralph, no branch's commit",
	"raw.go (*Checkpoints).rawTree":       "a checkpoint's scratch index beside the session's: refs/ralph, no branch's commit",
	"raw.go (*Checkpoints).HeadIsExact":   "the session's checkpoint index, only read",
	"writeback.go (*Repo).restoreByGit":   "undo's scratch index for writing files back through git restore, no commit",
	"expect.go (*Checkpoints).predict":    "undo's expected tree, no commit",
	"heads.go (*Repo).indexTree":          "a copy of the person's index in a temporary file, for its tree, no commit",
}

// commitSites are the functions that run git's commit or commit-tree,
// each with the index the commit's tree comes from.
var commitSites = map[string]string{
	"hooks.go (*Repo).commit":          "ralph's own index (ix.env), holding the tree the person's hooks judged",
	"taskcommit.go (*Repo).CommitWork": "without hooks only (ralph-temporal's workers, in clones of their own where no hook of the person's judges anything): the work tree's index; with hooks it goes through commit",
	"worktree.go (*Repo).Snapshot":     "the tree of ralph's own index (ix.env): ralph's record of unfinished work on the task's branch, which no hook judges",
	"worktree.go (*Repo).MergeBranch":  "the tree git merge-tree wrote from two commits already made, no index",
	"revert.go (*Repo).RevertCommit":   "an undo's revert of a task's commit: the tree git merge-tree wrote from commits already made, no index and no hooks (git revert runs none unless asked to edit)",
}

// gitSite is one place in memory/git: "file (recv).Func", and its line.
type gitSite struct {
	name string
	line int
}

// commitSitesIn lists, in the file at path (or src), the functions that
// hand git an index of their own ("GIT_INDEX_FILE=" literals), those
// that run git commit or commit-tree, and those that run the person's
// hooks for a commit (call commit with a *commitIndex, or pass ix.env to
// git's commit).
func commitSitesIn(t *testing.T, path string, src any) (index, commits, hooked []gitSite) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	base := filepath.Base(path)
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := base + " " + funcName(fn)
		seen := map[string]bool{}
		add := func(list *[]gitSite, kind string, pos token.Pos) {
			if !seen[kind] {
				seen[kind] = true
				*list = append(*list, gitSite{name, fset.Position(pos).Line})
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && strings.HasPrefix(v, "GIT_INDEX_FILE=") {
					add(&index, "index", n.Pos())
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "commit" && len(n.Args) >= 2 {
					add(&hooked, "hooked", n.Pos())
				}
				if sub := firstString(n.Args); sub == "commit" || sub == "commit-tree" {
					add(&commits, "commit", n.Pos())
				}
			case *ast.CompositeLit:
				if sub := firstString(n.Elts); sub == "commit" || sub == "commit-tree" {
					add(&commits, "commit", n.Pos())
				}
			}
			return true
		})
	}
	return index, commits, hooked
}

// firstString is the first string literal among exprs: a git command's
// subcommand, when exprs are its arguments.
func firstString(exprs []ast.Expr) string {
	for _, e := range exprs {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, _ := strconv.Unquote(lit.Value)
			return v
		}
	}
	return ""
}

// funcName is "(*Recv).Name" for a method, "Name" for a function.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	switch r := fn.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		if id, ok := r.X.(*ast.Ident); ok {
			return "(*" + id.Name + ")." + fn.Name.Name
		}
	case *ast.Ident:
		return "(" + r.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// checkCommitSites is what TestCommitsAreBuiltInRalphsOwnIndex says of
// the sites found: a site not listed, and a listed one no longer there.
func checkCommitSites(index, commits, hooked []gitSite, routes map[string]bool) []string {
	var bad []string
	for _, s := range index {
		if indexSites[s.name] == "" {
			bad = append(bad, s.name+":"+strconv.Itoa(s.line)+" hands git an index (GIT_INDEX_FILE) of its own: a commit on a branch is built in ralph's own index only (newCommitIndex, commitindex.go), where no command can write; list any other in indexSites with why")
		}
	}
	for _, s := range commits {
		if commitSites[s.name] == "" {
			bad = append(bad, s.name+":"+strconv.Itoa(s.line)+" runs git commit or commit-tree: commit through (*Repo).commit, which commits ralph's own index with the tree the person's hooks judged; list any other in commitSites with why")
		}
	}
	for _, s := range hooked {
		method := s.name[strings.LastIndex(s.name, ".")+1:]
		if !routes[method] {
			bad = append(bad, s.name+":"+strconv.Itoa(s.line)+" makes a commit the person's hooks judge: add it to commitRoutes, so TestEveryHookSeesTheIndexThatIsCommitted drives it")
		}
	}
	return bad
}

// TestCommitsAreBuiltInRalphsOwnIndex fails when memory/git hands git an
// index, or runs git commit or commit-tree, anywhere not listed with its
// reason, or when a function that runs the person's hooks for a commit is
// not one of the routes TestEveryHookSeesTheIndexThatIsCommitted drives.
func TestCommitsAreBuiltInRalphsOwnIndex(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for name := range commitRoutes {
		routes[name] = true
	}
	var index, commits, hooked []gitSite
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		i, c, h := commitSitesIn(t, f, nil)
		index, commits, hooked = append(index, i...), append(commits, c...), append(hooked, h...)
	}
	bad := checkCommitSites(index, commits, hooked, routes)
	seen := map[string]bool{}
	for _, s := range append(index, commits...) {
		seen[s.name] = true
	}
	for _, list := range []map[string]string{indexSites, commitSites} {
		for name := range list {
			if !seen[name] {
				bad = append(bad, name+" is listed, but hands git no index or commit any more: take it off")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	// The commit of the hooks is made from ralph's own index alone.
	src, err := os.ReadFile("hooks.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `ix.env(env...), []byte(message), "commit"`) {
		t.Error("hooks.go's commit no longer commits ralph's own index (ix.env)")
	}
}

// TestCommitSitesGuardSeesAPlantedCommit: a new route that commits from
// an index in the session's directory, and one that runs the hooks for
// a commit without being among commitRoutes, are both caught.
func TestCommitSitesGuardSeesAPlantedCommit(t *testing.T) {
	t.Parallel()
	src := `package git

func (r *Repo) CommitAgain(ctx context.Context, dir string) error {
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "commit-index")}
	_, err := runCmd(ctx, SlowTimeout, false, r.Top, env, nil, "commit", "-q", "--no-verify")
	return err
}

func (r *Repo) CommitMore(ctx context.Context, ix *commitIndex) error {
	_, err := r.commit(ctx, ix, nil, "more")
	return err
}
`
	index, commits, hooked := commitSitesIn(t, "planted.go", src)
	bad := checkCommitSites(index, commits, hooked, map[string]bool{"CommitPaths": true})
	if len(bad) != 3 {
		t.Fatalf("the guard saw %d violations, want 3:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	for i, want := range []string{"planted.go (*Repo).CommitAgain:4 hands git an index", "planted.go (*Repo).CommitAgain:5 runs git commit", "planted.go (*Repo).CommitMore:10 makes a commit the person's hooks judge"} {
		if !strings.HasPrefix(bad[i], want) {
			t.Errorf("violation %d = %q, want %q…", i, bad[i], want)
		}
	}
}
