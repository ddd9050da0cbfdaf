// Package taskgit is git's part in ralph run's task loop: a checkpoint
// after every attempt at a task (as the task's, without the loop's own
// bookkeeping), a commit per done task (--commit), or a worktree and a
// branch per task merged back when it is done (--worktrees), and the
// worktrees a crashed run left, found again or removed. What git must
// hold before such a run starts is checked where the run's settings are
// (coordinator/project).
package taskgit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/coordinator/loop"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/spf13/afero"
)

// worktreesDir is where `ralph run --worktrees` puts each task's worktree,
// under .ralph/: on the repository's own file system (a checkout there is
// as fast as the person's, and a tool's caches keyed by path stay put),
// ignored by .ralph/.gitignore and left out of checkpoints, and found again
// by the next run after a crash, which works on in a task's leftover tree
// or removes it. The file tools' protection of .ralph/ is relative to the
// root they serve, so tools rooted in a worktree work there as anywhere.
const worktreesDir = "worktrees"

// New is git's part in the task loop of the open project p (see
// loop.TaskGit): a checkpoint after every attempt, and as the run asks,
// a commit per done task or a worktree per task merged back. It is nil
// outside git.
func New(p *project.Project, run *memory.RunConfig) loop.TaskGit {
	cps := p.Git(context.Background())
	if cps.Checkpoints() == nil {
		return nil
	}
	// The baseline is what the person had before the loop writes anything
	// (task ids, states).
	cps.Ready()
	root, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		root = p.Root
	}
	// The person's hooks on the loop's commits run in the sandbox of the
	// model's commands (memory/git/hooks.go): the code they run is the
	// tree's.
	repo := cps.Checkpoints().Repo()
	if p.Tools != nil {
		repo.Hooks = p.Tools.Workspace()
	}
	// git names worktrees by their real paths.
	return newTaskGit(deps{
		repo: repo, cps: cps, session: p.Session, redactor: p.Redactor, fs: p.Fs,
		rooted:  p.Tools.Rooted,
		noteErr: cps.NoteError,
	}, filepath.Join(root, memory.StateDir, worktreesDir), run)
}

// TaskCheckpointer records a task's attempts as the task's checkpoints
// and reads them back from the session's checkpoint log (the session's
// git, checkpoint.Tracker).
type TaskCheckpointer interface {
	RecordTask(ctx context.Context, task, name string, skip map[string]bool, written []string) []git.FileChange
	TaskEntries(id string) []git.Entry
}

// checkpointer is what task git records through: the session's git
// (project.Project.Git).
type checkpointer interface {
	TaskCheckpointer
	Before(ctx context.Context)
	Ready()
	LeaveOut(paths []string)
}

// deps are what task git works with, given by New from the open project.
type deps struct {
	repo     *git.Repo
	cps      checkpointer
	session  *memory.Session
	redactor *memory.Redactor
	fs       afero.Fs
	// rooted is the project's tools rooted in a task's worktree.
	rooted func(dir string) (*tools.Toolset, error)
	// noteErr tells the person of git work that failed.
	noteErr func(error)
}

// newTaskGit is task git for the run, with its worktrees under base.
func newTaskGit(d deps, base string, run *memory.RunConfig) *taskGit {
	tg := &taskGit{deps: d, trees: map[string]*worktree{}, base: base}
	if run != nil {
		tg.plan = run.Plan
		tg.commit, tg.worktrees = run.Commit || run.Worktrees, run.Worktrees
	}
	if tg.worktrees {
		tg.saveWorkers() // none yet, whatever a crashed run left in the record
	}
	// No checkpoint of the run takes the loop's own files, a turn's no
	// more than a task's.
	d.cps.LeaveOut(slices.Collect(maps.Keys(tg.loopFiles())))
	return tg
}

type taskGit struct {
	deps
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

func (g *taskGit) Workspace(ctx context.Context, t planfile.Task, attempt int) (loop.Workspace, error) {
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
var unsafeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// addWorktree makes the task's worktree on a new branch from HEAD, or
// takes up the one a crashed run left for it.
func (g *taskGit) addWorktree(ctx context.Context, id string) (*worktree, error) {
	name := strings.Trim(unsafeRef().ReplaceAllString(id, "-"), ".-")
	if name == "" {
		name = "task"
	}
	if err := g.makeBase(); err != nil {
		return nil, err
	}
	dir := filepath.Join(g.base, name)
	branch, made := "", false
	list, err := g.repo.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		if w.Dir == dir && w.Branch != "" {
			branch = w.Branch
		}
	}
	if branch == "" {
		for n := 2; ; n++ {
			if n > 1000 {
				return nil, fmt.Errorf("worktree: no free directory for task %s under %s", id, g.base)
			}
			if _, err := g.lstat(dir); errors.Is(err, fs.ErrNotExist) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("worktree %s: %w", dir, err)
			}
			// Something is there. A tree git lists without a branch is
			// what a crash left half made, and git removes it; a
			// directory git does not list is not ralph's to remove, and
			// the task takes the next free name.
			if g.repo.Listed(ctx, dir) {
				if err := g.removeTree(ctx, dir); err != nil {
					return nil, err
				}
				continue
			}
			dir = filepath.Join(g.base, fmt.Sprintf("%s-%d", name, n))
		}
		branch = git.TaskBranch(name)
		for n := 2; g.repo.Rev(ctx, "refs/heads/"+branch) != ""; n++ {
			branch = git.TaskBranch(fmt.Sprintf("%s-%d", name, n))
		}
		if err := g.repo.AddWorktree(ctx, dir, branch, "HEAD"); err != nil {
			return nil, err
		}
		made = true
		// git made the tree by its path: had a link been put on the way
		// meanwhile, the tree would be elsewhere, so the way to it is
		// looked at again through the door before anything works there.
		if err := g.fs.MkdirAll(dir, 0o700); err != nil {
			_ = g.repo.RemoveWorktree(ctx, dir)
			return nil, fmt.Errorf("%w: %w", errLinkedWorktrees, err)
		}
	}
	wrepo, err := git.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("worktree %s: %w", dir, err)
	}
	// The project may be a directory inside the repository; so it is in
	// the worktree.
	projDir := filepath.Join(dir, filepath.FromSlash(g.repo.Prefix))
	tools, err := g.rooted(projDir)
	if err != nil {
		return nil, err
	}
	// The person's hooks on the task's commit, and the post-checkout of
	// the new tree, run in the sandbox of the task's commands.
	if tools != nil {
		wrepo.Hooks = tools.Workspace()
	}
	if made {
		if err := wrepo.PostCheckout(ctx); err != nil {
			if tools != nil {
				tools.Close()
			}
			return nil, err
		}
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
	_ = g.session.SaveState(func(s *memory.State) { s.Workers = list })
}

func (g *taskGit) Ended(ctx context.Context, t planfile.Task, attempt int, ws loop.Workspace, written []string) []git.FileChange {
	if ws.Branch != "" {
		return nil // its changes reach the project with its merge
	}
	return g.checkpoint(ctx, t, attempt, written)
}

// checkpoint records the work tree as the task's, leaving out the task
// loop's own bookkeeping (the task file, the progress file and the
// plan), which no undo of a task should put back. written, when not nil,
// are the only paths the attempt can have changed (loop.TaskGit.Ended).
func (g *taskGit) checkpoint(ctx context.Context, t planfile.Task, attempt int, written []string) []git.FileChange {
	g.cps.Ready()
	return g.cps.RecordTask(ctx, t.ID, fmt.Sprintf("task-%s-%d", unsafeRef().ReplaceAllString(t.ID, "-"), attempt), g.loopFiles(), written)
}

// loopFiles are the task loop's own files, relative to the top: the
// task file, the progress file and the plan the loop works.
func (g *taskGit) loopFiles() map[string]bool {
	skip := map[string]bool{}
	for _, f := range memory.LoopFiles() {
		skip[g.repo.Prefix+f] = true
	}
	if g.plan != "" {
		skip[g.repo.Prefix+g.plan] = true
	}
	return skip
}

// message is a task's commit message: its title, the summary the agent
// gave, and the trailers that make the commit part of the task's
// completion record: the session, the task and the attempt
// (git.TaskTrailers), which recovery after a crash reads. The text comes
// from the model and the task file, so secrets and terminal controls are
// taken out; an id that is not one word gets no task trailers.
func (g *taskGit) message(t planfile.Task, attempt int, summary string) string {
	msg := g.clean(t.Title)
	if s := g.clean(summary); s != "" {
		msg += "\n\n" + s
	}
	return msg + "\n\n" + g.trailers(t, attempt)
}

// clean takes secrets and terminal controls out of a commit message's
// text.
func (g *taskGit) clean(s string) string {
	return strings.TrimSpace(text.StripControls(g.redactor.Redact(s)))
}

// trailers are a task commit's trailer lines, each ending in a newline.
func (g *taskGit) trailers(t planfile.Task, attempt int) string {
	tr, _ := git.TaskTrailers(t.ID, attempt) // "" for an id that is not a word: landed says so
	return "Ralph-Session: " + g.session.ID + "\n" + tr
}

// landed is what the note of a task's commit adds when the commit that
// reached the branch does not name the task's attempt: a commit-msg hook
// of the person's took the trailers out (or the id is not one word), so a
// recovery after a crash can go by the task's progress entry alone. It is
// said once, with the commit it is true of.
func landed(ctx context.Context, repo *git.Repo, commit string, t planfile.Task, attempt int) string {
	if ok, err := repo.NamesTask(ctx, commit, t.ID, attempt); err != nil || ok {
		return ""
	}
	return fmt.Sprintf("; its commit carries no %s trailer (a commit-msg hook took it out, or the id is not one word), so a recovery after a crash knows the task done by its progress entry alone", git.TrailerTask)
}

func (g *taskGit) Done(ctx context.Context, t planfile.Task, attempt int, summary string, ws loop.Workspace) (string, []git.FileChange, error) {
	if !g.commit {
		return "", nil, nil
	}
	if ws.Branch != "" {
		return g.merge(ctx, t, attempt, summary)
	}
	paths := g.taskPaths(t.ID)
	commit, err := g.repo.CommitPaths(ctx, paths, g.message(t, attempt, summary))
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("the commit of task %s failed: %w", t.ID, err)
	case commit == "":
		return fmt.Sprintf("task %s changed no files; nothing to commit", t.ID), nil, nil
	}
	return fmt.Sprintf("task %s committed as %s", t.ID, commit[:min(12, len(commit))]) + landed(ctx, g.repo, commit, t, attempt), nil, nil
}

// taskPaths are the files every checkpointed attempt at a task changed.
func (g *taskGit) taskPaths(id string) []string {
	var paths []string
	for _, e := range g.cps.TaskEntries(id) {
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
func (g *taskGit) merge(ctx context.Context, t planfile.Task, attempt int, summary string) (string, []git.FileChange, error) {
	g.mu.Lock()
	wt := g.trees[t.ID]
	g.mu.Unlock()
	if wt == nil {
		return "", nil, fmt.Errorf("task %s has no worktree", t.ID)
	}
	// The trailers go on the worktree's commit as well as on the merge:
	// a fast-forward makes no merge commit.
	if _, err := wt.repo.CommitWork(ctx, g.message(t, attempt, summary), git.WorkCommit{}); err != nil {
		return "", nil, fmt.Errorf("the commit of task %s on %s failed: %w", t.ID, wt.ws.Branch, err)
	}
	msg := fmt.Sprintf("Merge %s: %s\n\n%s", wt.ws.Branch, g.clean(t.Title), g.trailers(t, attempt))
	res, err := g.repo.MergeBranch(ctx, wt.ws.Branch, msg)
	if err != nil {
		if errors.Is(err, git.ErrMergeConflict) {
			g.remove(ctx, wt, true)
		}
		return "", nil, err
	}
	files := g.checkpoint(ctx, t, attempt, nil) // a merge may change any file
	g.remove(ctx, wt, false)
	if len(res.Files) == 0 {
		return fmt.Sprintf("task %s changed no files; nothing to merge", t.ID), files, nil
	}
	how := "fast-forward"
	if !res.FastForward {
		how = "merge commit " + res.Commit[:min(12, len(res.Commit))]
	}
	return fmt.Sprintf("task %s merged from %s (%s)", t.ID, wt.ws.Branch, how) + landed(ctx, g.repo, res.Commit, t, attempt), files, nil
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
	if err := g.removeTree(ctx, wt.dir); err != nil {
		g.noteErr(err)
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
	_ = g.fs.Remove(base) // only when empty
	return notices
}

// errLinkedWorktrees says .ralph/worktrees, or the way to it, is a
// symbolic link. ralph never makes one there; a command may have (in the
// Landlock-only fallback commands can write .ralph/), to send a task's
// worktree, and the removal of a leftover one, into the person's home.
var errLinkedWorktrees = errors.New("ralph makes no task worktree through a symbolic link (a command may have planted one at .ralph/worktrees): remove the link and run again")

// makeBase makes .ralph/worktrees through the project's door, which
// refuses a link in any component, the last one included (a bare os.Root
// would follow .ralph/worktrees -> ../src, a link that stays inside).
func (g *taskGit) makeBase() error {
	if err := g.fs.MkdirAll(g.base, 0o700); err != nil {
		if errors.Is(err, rootfs.ErrLink) || errors.Is(err, rootfs.ErrLinkOut) {
			return errLinkedWorktrees
		}
		return fmt.Errorf("worktrees: %w", err)
	}
	return nil
}

// lstat looks at name through the door without following a link at it.
func (g *taskGit) lstat(name string) (fs.FileInfo, error) {
	if l, ok := g.fs.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(name)
		return fi, err
	}
	return g.fs.Stat(name)
}

// removeTree removes a worktree git lists. git removes it; should git
// fail (a tree half made or half removed) while still listing it, its
// directory goes through the project's door, which follows no link, and
// git forgets it. A directory git does not list is never removed.
func (g *taskGit) removeTree(ctx context.Context, dir string) error {
	err := g.repo.RemoveWorktree(ctx, dir)
	if err == nil || !g.repo.Listed(ctx, dir) {
		return err
	}
	if rerr := g.fs.RemoveAll(dir); rerr != nil {
		return errors.Join(err, rerr)
	}
	return g.repo.PruneWorktrees(ctx)
}

var _ loop.TaskGit = (*taskGit)(nil)
