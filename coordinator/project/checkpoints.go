package project

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
)

// indexName is ralph's own git index for a session's checkpoints, in the
// session's directory (ignored by .ralph/.gitignore).
const indexName = "git-index"

// gitState is what the project knows of its git work tree: nothing
// outside git.
type gitState struct {
	repo    *git.Repo
	context string // for the system prompt
	cps     *checkpoints
}

// openGit looks at the git work tree the project lies in, if any. It
// never fails: outside git, or without git, there is simply no state.
func (p *Project) openGit(ctx context.Context) *gitState {
	if p.git != nil {
		return p.git
	}
	p.git = &gitState{}
	repo, err := git.Open(ctx, p.Root)
	if err != nil {
		return p.git
	}
	p.git.repo = repo
	if text, err := repo.Context(ctx); err == nil {
		p.git.context = text
	}
	entries := p.CheckpointLog(p.Session.ID)
	p.git.cps = newCheckpoints(repo, p.Session, filepath.Join(p.Root, ".ralph"), entries, p.recordErr)
	if p.Resumed && len(entries) > 0 {
		p.git.context += p.sinceBaseline(ctx, entries[0])
	}
	return p.git
}

// sinceBaseline says, for a resumed session's system prompt, what changed
// in the work tree since the session's first checkpoint.
func (p *Project) sinceBaseline(ctx context.Context, base git.Entry) string {
	out, err := p.git.repo.Git(ctx, []string{"GIT_OPTIONAL_LOCKS=0"}, "diff", "--stat=100", "--no-renames", base.Commit, "--")
	if err != nil || len(out) == 0 {
		return "Since this session began, tracked files are unchanged.\n"
	}
	return "Since this session began (its first checkpoint), the work tree changed (git diff --stat):\n" + string(out)
}

// CheckpointLog reads a session's checkpoint log.
func (p *Project) CheckpointLog(session string) []git.Entry {
	data, err := afero.ReadFile(p.Fs, memory.LogPath(p.Root, session, git.LogName))
	if err != nil {
		return nil
	}
	return git.ParseLog(data)
}

// recordErr notes a checkpoint that could not be taken: once in the
// session's errors log per process, never failing the run.
func (p *Project) recordErr(err error) {
	p.Session.AppendLog("errors", map[string]any{"time": time.Now().UTC(), "kind": "checkpoint", "message": err.Error()})
}

// checkpoints implements coordinator.Checkpointer for a session.
type checkpoints struct {
	cps     *git.Checkpoints
	session *memory.Session
	fail    func(error)
	// ready closes when the session's first checkpoint of this process
	// (the baseline, or what changed while ralph was away) is taken.
	ready chan struct{}
	mu    sync.Mutex
	warn  sync.Once
}

func newCheckpoints(repo *git.Repo, s *memory.Session, stateDir string, entries []git.Entry, fail func(error)) *checkpoints {
	last, kind := "", git.KindBaseline
	if n := len(entries); n > 0 {
		last, kind = entries[n-1].Commit, git.KindResume
	}
	c := &checkpoints{
		cps:     git.NewCheckpoints(repo, s.ID, filepath.Join(s.Dir, indexName), stateDir, last),
		session: s, fail: fail, ready: make(chan struct{}),
	}
	// The first checkpoint runs beside the first model request; Before
	// waits for it before any tool may change a file.
	go func() {
		defer close(c.ready)
		c.record(context.Background(), git.Entry{Kind: kind}, kind)
	}()
	return c
}

// record takes a checkpoint and logs it; name is the ref's last part.
func (c *checkpoints) record(ctx context.Context, e git.Entry, name string) *git.Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, err := c.cps.Record(ctx, name, fmt.Sprintf("ralph %s %s", c.session.ID, name))
	if err != nil {
		c.warn.Do(func() { c.fail(err) })
		return nil
	}
	if cp == nil {
		return nil
	}
	e.Time, e.Checkpoint = time.Now().UTC(), *cp
	if err := c.session.AppendLog(git.LogName, e); err != nil {
		c.warn.Do(func() { c.fail(err) })
	}
	return cp
}

// recordTask takes a checkpoint after an attempt at a task and logs it
// as the task's, with the files it changed save those in skip (paths
// relative to the top). A checkpoint that changed only skipped files is
// not logged: the task changed nothing of its own.
func (c *checkpoints) recordTask(ctx context.Context, task, name string, skip map[string]bool) []git.FileChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, err := c.cps.Record(ctx, name, fmt.Sprintf("ralph %s %s", c.session.ID, name))
	if err != nil {
		c.warn.Do(func() { c.fail(err) })
		return nil
	}
	if cp == nil {
		return nil
	}
	var files []git.FileChange
	for _, f := range cp.Files {
		if !skip[f.Path] {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil
	}
	cp.Files = files
	if err := c.session.AppendLog(git.LogName, git.Entry{Kind: git.KindTask, Task: task, Time: time.Now().UTC(), Checkpoint: *cp}); err != nil {
		c.warn.Do(func() { c.fail(err) })
	}
	return files
}

func (c *checkpoints) Before(ctx context.Context) {
	select {
	case <-c.ready:
	case <-ctx.Done():
	}
}

func (c *checkpoints) After(ctx context.Context, turn int) []git.FileChange {
	<-c.ready
	cp := c.record(ctx, git.Entry{Kind: git.KindTurn, Turn: turn}, fmt.Sprintf("turn-%d", turn))
	if cp == nil {
		return nil
	}
	return cp.Files
}

// gitPrompt is the system prompt's section on the repository.
func (g *gitState) prompt() string {
	if g == nil || g.context == "" {
		return ""
	}
	return "\n\nThe git repository, as it was when this session started:\n\n" + strings.TrimRight(g.context, "\n") + "\n"
}

var _ coordinator.Checkpointer = (*checkpoints)(nil)
