package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
)

// checkpointLimit is how many of a session's newest requests the panel
// shows a diff of; the older ones name the command that shows theirs.
const checkpointLimit = 20

// checkpoint is one request whose checkpoints changed files, with the
// diff ralph diff shows for it (Command says how to get it there).
type checkpoint struct {
	What    string
	Command string
	Files   []string
	TooBig  []string
	Lines   []diffLine
	Err     string
	// Undone says an undo took the change back (undo.Changes.UndoneNote
	// in words): the patch is what ralph did then, not the files now.
	Undone string
}

// diffLine is one line of a patch with its class for colour: its text is
// the patch's, newline included, so the lines read together are the
// patch byte for byte.
type diffLine struct {
	Class, Text string
}

// checkpointsOf is a session's checkpoints, one for each request (each
// task for the task loop), newest first, as ralph diff selects them:
// --request N, --step N for a step recorded before requests were, --task
// ID.
func checkpointsOf(ctx context.Context, fs afero.Fs, root, id string) []checkpoint {
	log := git.ReadLogFile(fs, memory.LogPath(root, id, git.LogName))
	type pick struct {
		sel  undo.Selection
		flag string
	}
	var picks []pick
	seen := map[string]bool{}
	for _, e := range log {
		var p pick
		switch {
		case e.Kind == git.KindTurn && e.Request > 0:
			p = pick{undo.Selection{Request: e.Request}, "--request " + strconv.Itoa(e.Request)}
		case e.Kind == git.KindTurn:
			p = pick{undo.Selection{Step: e.Turn}, "--step " + strconv.Itoa(e.Turn)}
		case e.Kind == git.KindTask:
			p = pick{undo.Selection{Task: e.Task}, "--task " + e.Task}
		default:
			continue
		}
		if !seen[p.flag] {
			seen[p.flag] = true
			picks = append(picks, p)
		}
	}
	var out []checkpoint
	for i := len(picks) - 1; i >= 0; i-- {
		p := picks[i]
		c := checkpoint{Command: "ralph diff " + id + " " + p.flag}
		ch, err := undo.SelectChanges(ctx, fs, root, id, p.sel)
		if err != nil {
			c.What, c.Err = strings.TrimPrefix(p.flag, "--"), err.Error()
			out = append(out, c)
			continue
		}
		c.What, c.Files, c.TooBig, c.Undone = ch.What, ch.Files, ch.TooBig, ch.UndoneNote()
		if len(out) < checkpointLimit {
			patch, err := patchOf(ctx, ch)
			if err != nil {
				c.Err = err.Error()
			}
			c.Lines = diffLines(patch)
		}
		out = append(out, c)
	}
	return out
}

// patches keeps the patches made: a patch between two commits never
// changes, and a live page asks for its panels again at every change.
var patches = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// patchLimit bounds the patches kept.
const patchLimit = 512

// patchOf is ch's patch as ralph diff prints it (Changes.Patch), kept
// once made.
func patchOf(ctx context.Context, ch *undo.Changes) (string, error) {
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%s", ch.Repo.Top, ch.From, ch.To, strings.Join(ch.Files, "\x00"))
	patches.Lock()
	p, ok := patches.m[key]
	patches.Unlock()
	if ok {
		return p, nil
	}
	p, err := ch.Patch(ctx)
	if err != nil {
		return "", fmt.Errorf("diff %s: %w", ch.What, err)
	}
	patches.Lock()
	if len(patches.m) >= patchLimit {
		clear(patches.m)
	}
	patches.m[key] = p
	patches.Unlock()
	return p, nil
}

// diffLines splits a patch into its lines, classed as ralph diff colours
// them on a terminal.
func diffLines(patch string) []diffLine {
	var out []diffLine
	for _, l := range strings.SplitAfter(patch, "\n") {
		if l == "" {
			continue
		}
		out = append(out, diffLine{Class: diffClass(strings.TrimSuffix(l, "\n")), Text: l})
	}
	return out
}

func diffClass(body string) string {
	switch {
	case body == "":
		return ""
	case strings.HasPrefix(body, "diff --git"), strings.HasPrefix(body, "index "),
		strings.HasPrefix(body, "--- "), strings.HasPrefix(body, "+++ "),
		strings.HasPrefix(body, "new file"), strings.HasPrefix(body, "deleted file"):
		return "head"
	case strings.HasPrefix(body, "@@"):
		return "hunk"
	case body[0] == '+':
		return "add"
	case body[0] == '-':
		return "del"
	}
	return ""
}
