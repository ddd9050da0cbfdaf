package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
)

// worktreesDir is where `ralph run --worktrees` puts each task's worktree,
// under .ralph/: on the repository's own file system (a checkout there is
// as fast as the person's, and a tool's caches keyed by path stay put),
// ignored by .ralph/.gitignore and left out of checkpoints, and found again
// by the next run after a crash, which works on in a task's leftover tree
// or removes it. The file tools' protection of .ralph/ is relative to the
// root they serve, so tools rooted in a worktree work there as anywhere.
const worktreesDir = "worktrees"

// checkRunGit checks, before any work, that git can do what the run's
// --commit and --worktrees ask: a repository, a branch to commit on, the
// person's name and email, and (for worktrees) a commit to branch from.
func checkRunGit(ctx context.Context, run *memory.RunConfig, root string) error {
	if run == nil || !run.Commit && !run.Worktrees {
		return nil
	}
	flag := "--commit"
	if run.Worktrees {
		flag = "--worktrees"
	}
	repo, err := git.Open(ctx, root)
	if err != nil {
		return fmt.Errorf("%s needs a git repository, and this project is not in a git work tree", flag)
	}
	if _, err := repo.Branch(ctx); errors.Is(err, git.ErrDetached) {
		return fmt.Errorf("%s will not commit on a detached HEAD, where commits are easily lost: check out a branch first (git switch BRANCH, or git switch -c BRANCH)", flag)
	} else if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if err := repo.Identity(ctx); err != nil {
		return fmt.Errorf("%s needs your name and email for its commits: set them with git config user.name and git config user.email", flag)
	}
	if run.Worktrees && repo.HeadNow(ctx) == "" {
		return fmt.Errorf("--worktrees needs a commit to branch from, and this branch has none yet")
	}
	return nil
}

// TaskGit is git's part in this project's task loop (see
// loop.TaskGit): a checkpoint after every attempt, and as the run
// asks, a commit per done task or a worktree per task merged back. It is
// nil outside git.
func (p *Project) TaskGit(run *memory.RunConfig) loop.TaskGit {
	g := p.openGit(context.Background())
	if g.cps == nil {
		return nil
	}
	// The baseline is what the person had before the loop writes anything
	// (task ids, states).
	<-g.cps.ready
	root, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		root = p.Root
	}
	// git names worktrees by their real paths.
	tg := &taskGit{p: p, repo: g.repo, cps: g.cps, trees: map[string]*worktree{}, base: filepath.Join(root, ".ralph", worktreesDir)}
	if run != nil {
		tg.plan = run.Plan
		tg.commit, tg.worktrees = run.Commit || run.Worktrees, run.Worktrees
	}
	if tg.worktrees {
		tg.saveWorkers() // none yet, whatever a crashed run left in the record
	}
	return tg
}

type taskGit struct {
	p    *Project
	repo *git.Repo
	cps  *checkpoints
	// plan is the plan file the loop works (besides RALPH_TASKS.md),
	// bookkeeping that no task's checkpoint holds.
	plan      string
	commit    bool
	worktrees bool
	base      string // where the worktrees go

	mu    sync.Mutex
	trees map[string]*worktree // by task id
}

// worktree is one task's linked work tree.
type worktree struct {
	task  string
	dir   string // the worktree's top
	repo  *git.Repo
	ws    loop.Workspace
	tools *tools.Toolset
}

func (g *taskGit) Workspace(ctx context.Context, t memory.Task, attempt int) (loop.Workspace, error) {
	// The session's first checkpoint must be taken before a task changes
	// anything, or it would count as the person's.
	g.cps.Before(ctx)
	if !g.worktrees {
		return loop.Workspace{}, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if wt, ok := g.trees[t.ID]; ok {
		return wt.ws, nil // a retry goes on where the last attempt stopped
	}
	wt, err := g.addWorktree(ctx, t.ID)
	if err != nil {
		return loop.Workspace{}, err
	}
	g.trees[t.ID] = wt
	g.saveWorkers()
	return wt.ws, nil
}

// unsafeRef matches what may not stand in a branch or directory name.
var unsafeRef = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// addWorktree makes the task's worktree on a new branch from HEAD, or
// takes up the one a crashed run left for it.
func (g *taskGit) addWorktree(ctx context.Context, id string) (*worktree, error) {
	name := strings.Trim(unsafeRef.ReplaceAllString(id, "-"), ".-")
	if name == "" {
		name = "task"
	}
	dir := filepath.Join(g.base, name)
	branch := ""
	if list, err := g.repo.Worktrees(ctx); err == nil {
		for _, w := range list {
			if w.Dir == dir && w.Branch != "" {
				branch = w.Branch
			}
		}
	}
	if branch == "" {
		if _, err := os.Lstat(dir); err == nil {
			// Not a worktree git knows: what a crash left half made.
			if err := g.repo.RemoveWorktree(ctx, dir); err != nil {
				return nil, err
			}
		}
		branch = "ralph/" + name
		for n := 2; g.repo.Rev(ctx, "refs/heads/"+branch) != ""; n++ {
			branch = fmt.Sprintf("ralph/%s-%d", name, n)
		}
		if err := g.repo.AddWorktree(ctx, dir, branch, "HEAD"); err != nil {
			return nil, err
		}
	}
	wrepo, err := git.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("worktree %s: %w", dir, err)
	}
	// The project may be a directory inside the repository; so it is in
	// the worktree.
	projDir := filepath.Join(dir, filepath.FromSlash(g.repo.Prefix))
	tools, err := g.p.Tools.Rooted(projDir)
	if err != nil {
		return nil, err
	}
	return &worktree{task: id, dir: dir, repo: wrepo, tools: tools,
		ws: loop.Workspace{Dir: projDir, Branch: branch, Tools: tools}}, nil
}

// saveWorkers puts the worktrees in session.json, for ralph status.
func (g *taskGit) saveWorkers() {
	var list []memory.Worker
	for _, wt := range g.trees {
		rel, err := filepath.Rel(filepath.Dir(filepath.Dir(g.base)), wt.ws.Dir)
		if err != nil {
			rel = wt.ws.Dir
		}
		list = append(list, memory.Worker{Task: wt.task, Dir: rel, Branch: wt.ws.Branch})
	}
	slices.SortFunc(list, func(a, b memory.Worker) int { return strings.Compare(a.Task, b.Task) })
	_ = g.p.Session.SaveState(func(s *memory.State) { s.Workers = list })
}

func (g *taskGit) Ended(ctx context.Context, t memory.Task, attempt int, ws loop.Workspace) []git.FileChange {
	if ws.Branch != "" {
		return nil // its changes reach the project with its merge
	}
	return g.checkpoint(ctx, t, attempt)
}

// checkpoint records the work tree as the task's, leaving out the task
// loop's own bookkeeping (the task file and the progress file), which
// no undo of a task should put back.
func (g *taskGit) checkpoint(ctx context.Context, t memory.Task, attempt int) []git.FileChange {
	<-g.cps.ready
	skip := map[string]bool{g.repo.Prefix + memory.TasksFile: true, g.repo.Prefix + memory.ProgressFile: true}
	if g.plan != "" {
		skip[g.repo.Prefix+g.plan] = true
	}
	return g.cps.recordTask(ctx, t.ID, fmt.Sprintf("task-%s-%d", unsafeRef.ReplaceAllString(t.ID, "-"), attempt), skip)
}

// message is a task's commit message: its title, the summary the agent
// gave, and the session as a trailer. The text comes from the model and
// the task file, so secrets and terminal controls are taken out.
func (g *taskGit) message(t memory.Task, summary string) string {
	clean := func(s string) string {
		return strings.TrimSpace(text.StripControls(g.p.Redactor.Redact(s)))
	}
	msg := clean(t.Title)
	if s := clean(summary); s != "" {
		msg += "\n\n" + s
	}
	return msg + "\n\nRalph-Session: " + g.p.Session.ID + "\n"
}

func (g *taskGit) Done(ctx context.Context, t memory.Task, attempt int, summary string, ws loop.Workspace) (string, []git.FileChange, error) {
	if !g.commit {
		return "", nil, nil
	}
	if ws.Branch != "" {
		return g.merge(ctx, t, attempt, summary)
	}
	paths := g.taskPaths(t.ID)
	commit, err := g.repo.CommitPaths(ctx, filepath.Join(g.p.Session.Dir, "commit-index"), paths, g.message(t, summary))
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("the commit of task %s failed: %w", t.ID, err)
	case commit == "":
		return fmt.Sprintf("task %s changed no files; nothing to commit", t.ID), nil, nil
	}
	return fmt.Sprintf("task %s committed as %s", t.ID, commit[:min(12, len(commit))]), nil, nil
}

// taskPaths are the files every checkpointed attempt at a task changed.
func (g *taskGit) taskPaths(id string) []string {
	var paths []string
	for _, e := range g.p.CheckpointLog(g.p.Session.ID) {
		if e.Kind != git.KindTask || e.Task != id {
			continue
		}
		for _, f := range e.Files {
			if !slices.Contains(paths, f.Path) {
				paths = append(paths, f.Path)
			}
		}
	}
	return paths
}

// merge commits a task's worktree on its branch and merges the branch
// into the project's. The worktree goes either way; the branch goes once
// merged and stays on a conflict, holding the task's work.
func (g *taskGit) merge(ctx context.Context, t memory.Task, attempt int, summary string) (string, []git.FileChange, error) {
	g.mu.Lock()
	wt := g.trees[t.ID]
	g.mu.Unlock()
	if wt == nil {
		return "", nil, fmt.Errorf("task %s has no worktree", t.ID)
	}
	if _, err := wt.repo.CommitAll(ctx, g.message(t, summary)); err != nil {
		return "", nil, fmt.Errorf("the commit of task %s on %s failed: %w", t.ID, wt.ws.Branch, err)
	}
	msg := fmt.Sprintf("Merge %s: %s\n\nRalph-Session: %s\n", wt.ws.Branch, strings.TrimSpace(text.StripControls(g.p.Redactor.Redact(t.Title))), g.p.Session.ID)
	res, err := g.repo.MergeBranch(ctx, wt.ws.Branch, msg)
	if err != nil {
		if errors.Is(err, git.ErrMergeConflict) {
			g.remove(ctx, wt, true)
		}
		return "", nil, err
	}
	files := g.checkpoint(ctx, t, attempt)
	g.remove(ctx, wt, false)
	if len(res.Files) == 0 {
		return fmt.Sprintf("task %s changed no files; nothing to merge", t.ID), files, nil
	}
	how := "fast-forward"
	if !res.FastForward {
		how = "merge commit " + res.Commit[:min(12, len(res.Commit))]
	}
	return fmt.Sprintf("task %s merged from %s (%s)", t.ID, wt.ws.Branch, how), files, nil
}

// remove removes a task's worktree, and its branch unless keep is set or
// the branch holds work the project's branch lacks (unfinished work is
// first recorded on it). It returns a notice when the branch stays for
// that reason.
func (g *taskGit) remove(ctx context.Context, wt *worktree, keep bool) string {
	notice := ""
	if c, err := wt.repo.Snapshot(ctx, "ralph: unfinished work on task "+wt.task); err == nil && c != "" {
		notice = fmt.Sprintf("the unfinished work of task %s is kept on the branch %s", wt.task, wt.ws.Branch)
	}
	if wt.tools != nil {
		wt.tools.Close()
	}
	if err := g.repo.RemoveWorktree(ctx, wt.dir); err != nil {
		g.p.recordErr(err)
	}
	branch := wt.ws.Branch
	if tip := g.repo.Rev(ctx, "refs/heads/"+branch); !keep && tip != "" {
		if head := g.repo.HeadNow(ctx); head != "" && g.repo.IsAncestor(ctx, tip, head) {
			_ = g.repo.DeleteBranch(ctx, branch)
		} else if notice == "" {
			notice = fmt.Sprintf("the work of task %s is kept on the branch %s", wt.task, branch)
		}
	}
	g.mu.Lock()
	delete(g.trees, wt.task)
	g.saveWorkers()
	g.mu.Unlock()
	return notice
}

func (g *taskGit) Close(ctx context.Context) []string {
	if !g.worktrees {
		return nil
	}
	g.mu.Lock()
	var list []*worktree
	for _, wt := range g.trees {
		list = append(list, wt)
	}
	g.mu.Unlock()
	// Trees a crashed run left behind go too.
	base := g.base
	if known, err := g.repo.Worktrees(ctx); err == nil {
		for _, w := range known {
			if filepath.Dir(w.Dir) == base && !slices.ContainsFunc(list, func(wt *worktree) bool { return wt.dir == w.Dir }) {
				if r, err := git.Open(ctx, w.Dir); err == nil {
					list = append(list, &worktree{task: filepath.Base(w.Dir), dir: w.Dir, repo: r, ws: loop.Workspace{Branch: w.Branch}})
				}
			}
		}
	}
	slices.SortFunc(list, func(a, b *worktree) int { return strings.Compare(a.task, b.task) })
	var notices []string
	for _, wt := range list {
		if n := g.remove(ctx, wt, false); n != "" {
			notices = append(notices, n)
		}
	}
	_ = g.repo.PruneWorktrees(ctx)
	_ = g.p.Fs.Remove(base) // only when empty
	return notices
}

var _ loop.TaskGit = (*taskGit)(nil)
