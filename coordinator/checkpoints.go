package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/ralph-dev/ralph/workers/tools/applypatch"
)

// Checkpointer records the work tree around the turns that may change it;
// the project implements it with git checkpoints. It tells the person of a
// failure itself, as it happens; the run goes on (the work is on disk),
// but a run at whose end a checkpoint still could not be taken ends as an
// error, since undo and diff will miss its changes: a check that could
// not run is never a pass.
type Checkpointer interface {
	// Before returns once every earlier checkpoint is taken, so that a
	// turn's tools never change files a pending checkpoint still reads.
	Before(ctx context.Context)
	// After records the work tree after a step's tools in the background,
	// beside the next model request, and calls report with the files
	// that changed, if any. written lists the paths the turn's file tools
	// were asked to write when nothing else could have changed a file
	// (no command ran, no agent was spawned); nil means anything may have
	// changed.
	After(step Step, written []string, report func([]git.FileChange))
	// Wait returns once no checkpoint is pending.
	Wait()
	// Retake takes again, once, the checkpoints that could not be taken
	// (after Wait): a passing failure, a disk that was full and has
	// space again, then costs nothing.
	Retake(ctx context.Context)
	// Failed numbers the latest checkpoint that could not be taken and is
	// still owed (counting from 1 in this process), and gives its error;
	// 0 and nil when none is owed. A run compares the number at its
	// start and its end.
	Failed() (int, error)
}

// ErrCheckpoint marks a run whose work is done but one of whose
// checkpoints could not be taken: the face shows the answer and exits
// non-zero.
var ErrCheckpoint = errors.New("a git checkpoint could not be recorded, so ralph undo and ralph diff will miss this run's changes")

// Step names a model step: its turn in the session, and the person's
// request it belongs to, named by the turn that request began at (every
// step of one Run is one request: a one-shot, a chat message, a task
// attempt), which undo and diff take as their unit.
type Step struct {
	Request, Turn int
}

// mayChangeFiles reports whether a turn's calls may have changed files.
func mayChangeFiles(calls []string) bool {
	for _, name := range calls {
		if !tools.Info(name).ReadOnly {
			return true
		}
	}
	return false
}

// checkpointAfter has the work tree recorded after a turn's tools,
// whatever ended them (a hard stop included: what the tools changed before
// it can still be undone), and tells the faces which files changed.
func (c *Coordinator) checkpointAfter(calls []conversation.ToolCall, turn int) {
	if files := c.takeChanged(); len(files) > 0 {
		c.emit(event.Event{Type: event.FilesChanged, Turn: turn, Files: files, Text: FilesSummary(files)})
	}
	c.stepOpen = false
	hooked := c.hooksRan.Swap(false)
	// A background command an earlier turn started writes when it will:
	// while one runs, and at the checkpoint after the last that ran,
	// every checkpoint looks at the whole work tree, whatever the turn's
	// own tools named (its write once escaped every checkpoint and undo).
	background := c.backgroundNote() != ""
	ranBeside := background || c.backgroundSeen
	c.backgroundSeen = background
	if !c.mayChangeFiles(calls) && !hooked && !ranBeside {
		return
	}
	written := writtenPaths(calls, c.opts.claims)
	if hooked || ranBeside || tools.HasToolHooks(c.opts.Hooks) {
		// A hook may have rewritten a call's path (updatedInput) or
		// changed files itself (a formatter, git add): the checkpoint
		// looks at the whole work tree, so undo covers what they did.
		written = nil
	}
	if written == nil {
		c.writtenUnknown = true
	} else {
		c.written = append(c.written, written...)
	}
	c.checkpoint(turn, written)
}

// checkpoint has the work tree recorded for the run's request after turn,
// in the background (Checkpointer.After); written as there.
func (c *Coordinator) checkpoint(turn int, written []string) {
	if c.opts.Checkpoints == nil {
		return
	}
	c.opts.Checkpoints.After(Step{Request: c.runStart + 1, Turn: turn}, written, func(files []git.FileChange) {
		if len(files) > 0 {
			c.emit(event.Event{Type: event.FilesChanged, Turn: turn, Files: files, Text: FilesSummary(files)})
		}
	})
}

// betweenTurns are the hooks that fire outside a turn's tools: at the
// session's start, at a prompt, when the model stops, around a
// compaction, when instructions load, and at the session's end. Each runs
// a program that may change files, so fire has it wait for every earlier
// checkpoint first, the session's baseline above all (a SessionStart hook
// that ran beside the baseline had its change taken into it, and undo
// could not take it back), and has the run's next checkpoint look at the
// whole work tree (hooksRan) so that its change is the request's.
func betweenTurns(event hooks.Event) bool {
	return !slices.Contains(aroundTools, event)
}

// aroundTools are the hooks that may fire while a turn's tools run, each
// a program that may change files: before and after a call (a PostToolUse
// hook may format or stage a file after a call that itself changed
// nothing), when a call asks for or is denied permission, and around a
// child agent.
var aroundTools = []hooks.Event{hooks.PreToolUse, hooks.PostToolUse, hooks.PostToolUseFailure,
	hooks.PermissionRequest, hooks.PermissionDenied, hooks.Notification, hooks.SubagentStart, hooks.SubagentStop}

// mayChangeFiles reports whether a turn's calls, or the hooks that fire
// around them, may change files. Such a turn waits for the session's
// first checkpoint (Before): a PreToolUse hook on read_file that ran
// beside it was taken into the baseline, and undo could not take its
// change back.
func (c *Coordinator) mayChangeFiles(calls []conversation.ToolCall) bool {
	if mayChangeFiles(callNames(calls)) {
		return true
	}
	return slices.ContainsFunc(aroundTools, c.opts.Hooks.Has)
}

// takeChanged returns the files this turn's file tools changed, each
// once (a file changed twice sums its lines), for FilesFromTools, and
// starts the next turn's list.
func (c *Coordinator) takeChanged() []git.FileChange {
	c.changedMu.Lock()
	changed := c.changed
	c.changed = nil
	c.changedMu.Unlock()
	var files []git.FileChange
	for _, ch := range changed {
		if i := slices.IndexFunc(files, func(f git.FileChange) bool { return f.Path == ch.Path }); i >= 0 {
			files[i].Added += ch.Added
			files[i].Deleted += ch.Deleted
			continue
		}
		files = append(files, ch)
	}
	return files
}

func callNames(calls []conversation.ToolCall) []string {
	names := make([]string, len(calls))
	for i, call := range calls {
		names[i] = call.Name
	}
	return names
}

// writtenPaths lists the paths a turn's file tools were asked to write,
// or nil when another tool (a command, a child agent, any tool ralph does
// not know) may have changed files anywhere. claims are the tools that
// only record a claim in ralph's memory (a task attempt's complete_task)
// and write nothing.
func writtenPaths(calls []conversation.ToolCall, claims []string) []string {
	paths := []string{}
	for _, call := range calls {
		switch {
		case tools.Info(call.Name).ReadOnly, slices.Contains(claims, call.Name):
		case tools.Info(call.Name).WritesPaths:
			var a struct {
				Path string `json:"path"`
			}
			if json.Unmarshal([]byte(call.Arguments), &a) != nil || a.Path == "" {
				continue // refused by the tool: it wrote nothing
			}
			paths = append(paths, a.Path)
		case call.Name == tools.ToolApplyPatch:
			// A patch names its files (and their move destinations);
			// one that does not parse wrote nothing.
			var a struct {
				Input string `json:"input"`
			}
			if json.Unmarshal([]byte(call.Arguments), &a) != nil {
				continue
			}
			paths = append(paths, applypatch.Paths(a.Input)...)
		default:
			return nil
		}
	}
	return paths
}

// FilesSummary is a turn's changed files in one line: "a.txt (+2 −0),
// b.txt (+1 −1)".
func FilesSummary(files []git.FileChange) string {
	parts := make([]string, len(files))
	for i, f := range files {
		if f.Binary {
			parts[i] = f.Path + " (binary)"
		} else {
			parts[i] = fmt.Sprintf("%s (+%d −%d)", f.Path, f.Added, f.Deleted)
		}
	}
	return strings.Join(parts, ", ")
}
