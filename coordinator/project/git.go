package project

import (
	"context"
	"slices"

	"github.com/ralph-dev/ralph/coordinator/checkpoint"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/hooks"
)

// The session's git is coordinator/checkpoint's Tracker; the project only
// hands it what it needs of the project (gitDeps) and says when the
// pinning may wait (pinLazily).

// tracker is the session's git tracker: the one Open made, or, for a
// project made without Open (a test's), one that looks at git when it is
// first opened.
func (p *Project) tracker() *checkpoint.Tracker {
	if p.git == nil {
		p.git = checkpoint.New(p.Root, p.Fs, false)
	}
	return p.git
}

// openGitBeside opens the session's git for the way to the first model
// request (checkpoint.Tracker.Open).
func (p *Project) openGitBeside(ctx context.Context) *checkpoint.Tracker {
	return p.tracker().Open(ctx, p.gitDeps())
}

// gitDeps are what the session's git needs of the project, read when it
// is first opened.
func (p *Project) gitDeps() checkpoint.Deps {
	writable := slices.Clone(p.Config.SandboxWritable)
	if p.Tools != nil {
		writable = append(writable, p.Tools.AddedDirs()...)
	}
	return checkpoint.Deps{
		Session: p.Session, Writable: writable, MaxFile: int64(p.Config.CheckpointMaxFileMB) << 20, Door: p.Door,
		Resolve: func(path string) (string, error) {
			real, _, err := p.Tools.Workspace().Resolve(path)
			return real, err
		},
		Resumed: p.Resumed,
		WarnTo: func() func(string) {
			if c := p.warnTo.Load(); c != nil {
				return c.Warn
			}
			return nil
		},
		Notify: p.notify,
	}
}

// pinLazily reports whether the pinning and the first checkpoint may
// wait for the first thing that needs them (checkpoint.Tracker.Open), for
// a main agent that runs with hooks: only when no program but the model's
// tools, which wait for them, can run before that. A hook runs at the
// session's start, at every prompt and around every tool call, read-only
// ones too (the session's and those of the main agent's definition); MCP
// servers start before the first request; a plugin brings either.
func (p *Project) pinLazily(hooks *hooks.Set) bool {
	return !hooks.Any() && len(p.Config.MCPServers) == 0 && len(p.Plugins) == 0
}

// Git is the session's git once ralph's git is pinned to the repository,
// for callers that run git themselves (undo, review, the task loop).
func (p *Project) Git(ctx context.Context) *checkpoint.Tracker {
	return p.tracker().Pinned(ctx, p.gitDeps())
}

// Checkpoints are the session's checkpoints once ralph's git is pinned
// to the repository (undo, review and the task loop run git themselves);
// nil outside git.
func (p *Project) Checkpoints(ctx context.Context) *checkpoint.Checkpoints {
	return p.Git(ctx).Checkpoints()
}

// CheckpointLog reads a session's checkpoint log, a line at a time.
func (p *Project) CheckpointLog(session string) []git.Entry {
	return p.tracker().Log(session)
}

// Warn tells the person something about this session's work, through
// the coordinator's events, when one runs.
func (p *Project) Warn(s string) {
	if c := p.warnTo.Load(); c != nil {
		c.Warn(s)
	}
}
