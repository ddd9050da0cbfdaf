package coordinator

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/git"
)

// Checkpointer records the work tree around the turns that may change it;
// the project implements it with git checkpoints. Failures are its own to
// report: a run never fails because a checkpoint could not be taken.
type Checkpointer interface {
	// Before returns once every earlier checkpoint is taken, so that a
	// turn's tools never change files a pending checkpoint still reads.
	Before(ctx context.Context)
	// After records the work tree after turn's tools in the background,
	// beside the next model request, and calls report with the files
	// that changed, if any.
	After(turn int, report func([]git.FileChange))
	// Wait returns once no checkpoint is pending.
	Wait()
}

// readOnlyTools change nothing in the work tree; a turn that called only
// these needs no checkpoint.
var readOnlyTools = map[string]bool{
	"read_file": true, "list_files": true, "search": true, "ask_user": true, "record_decision": true,
}

// mayChangeFiles reports whether a turn's calls may have changed files.
func mayChangeFiles(calls []string) bool {
	for _, name := range calls {
		if !readOnlyTools[name] {
			return true
		}
	}
	return false
}

// checkpointAfter has the work tree recorded after a turn's tools,
// whatever ended them (a hard stop included: what the tools changed before
// it can still be undone), and tells the faces which files changed.
func (c *Coordinator) checkpointAfter(calls []string, turn int) {
	if c.opts.Checkpoints == nil || !mayChangeFiles(calls) {
		return
	}
	c.opts.Checkpoints.After(turn, func(files []git.FileChange) {
		if len(files) > 0 {
			c.emit(Event{Type: EventFilesChanged, Turn: turn, Files: files, Text: FilesSummary(files)})
		}
	})
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
