package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory/text"
)

// shapeFace is the one-shot face's part for Claude Code's shape
// (--stream-shape claude) and its stream-json input (--input-format
// stream-json).
type shapeFace struct {
	// Shape is --stream-shape: ShapeRalph ("" too) or ShapeClaude.
	Shape string
	// Version is ralph's; PermissionMode the mode the run asks in, in
	// Claude Code's names ("" is default). The init line says both.
	Version, PermissionMode string
	// ToolNames lists the tools the run offers (OneShotMain sets it to
	// the coordinator's); nil lists none.
	ToolNames func() []string
	// claude writes the claude shape, once claudeShape made it.
	claude *claudeStream
	// more waits for the next user message of stream-json input; nil
	// when the task came as an argument.
	more func(context.Context) (string, bool)
}

// claudeShape is the writer of the claude shape when the face prints it,
// nil otherwise. It is made at its first use, from what the face knows
// then (OneShotMain has set the model and the project's root by the
// first event).
func (o *OneShot) shapedStream() *claudeStream {
	if o.Format != FormatStreamJSON || o.Shape != ShapeClaude {
		return nil
	}
	if o.claude == nil {
		if o.enc == nil {
			o.enc = newStreamEncoder(o.Stdout)
		}
		c := newClaudeStream(o.enc)
		c.version, c.cwd, c.model = o.Version, o.Cwd, o.Model
		if o.PermissionMode != "" {
			c.permissionMode = o.PermissionMode
		}
		c.toolNames = func() []string {
			if o.ToolNames == nil {
				return nil
			}
			return o.ToolNames()
		}
		o.claude = c
	}
	return o.claude
}

// followUps runs each further user message of stream-json input as a
// turn of the same conversation, and returns the last run's result for
// Finish. Each run's result line goes out before the next message is
// waited for: Claude Code's SDK sends its next message, or closes
// standard input, only once it has the result. An interrupted run ends
// the one-shot, as a hard stop does.
func (o *OneShot) followUps(ctx context.Context, res event.Result, run func(prompt string) event.Result) event.Result {
	c := o.shapedStream()
	for o.more != nil && c != nil && res.Subtype != event.SubtypeInterrupted {
		c.result(res)
		next, ok := o.more(ctx)
		if !ok {
			break
		}
		if res.IsError {
			// Finish says the last run's error; an earlier one's is said
			// here, as it would be had it been the last.
			msg := res.Text
			if res.Err != nil {
				msg = res.Err.Error()
			}
			fmt.Fprintf(o.Stderr, "ralph: %s\n", text.StripControls(msg))
		}
		c.wrote = false
		res = run(next)
	}
	return res
}

// settleShape settles --stream-shape on the face, with what the claude
// shape's init line says: a bad value is a usage error (exit 2), reported
// in the format asked for.
func (c *cli) settleShape(face *OneShot) int {
	if err := ValidateShape(c.f.shape.streamShape, face.Format); err != nil {
		return face.Fail(ExitUsage, err)
	}
	face.Shape, face.Version = c.f.shape.streamShape, c.version
	switch {
	case c.f.yes:
		face.PermissionMode = "bypassPermissions"
	case c.f.conv.permissionMode != "":
		face.PermissionMode = c.f.conv.permissionMode
	}
	return ExitOK
}

// taskInput reads the task's input after --input-format: piped standard
// input as context (text), or Claude Code's stream-json, whose first user
// message is the task (set in *task) and whose later ones the face runs
// as follow-ups.
func (c *cli) taskInput(ctx context.Context, face *OneShot, task *string) (stdin string, piped bool, err error) {
	switch c.f.shape.inputFormat {
	case InputText:
		return ReadPipedStdin(os.Stdin)
	case InputStreamJSON:
	default:
		return "", false, fmt.Errorf("--input-format %q is not one of text or stream-json", c.f.shape.inputFormat)
	}
	if face.Format != FormatStreamJSON || face.Shape != ShapeClaude {
		return "", false, errors.New("--input-format stream-json goes with --output-format stream-json --stream-shape claude: it is Claude Code's input, answered in Claude Code's shape")
	}
	if *task != "" {
		return "", false, errors.New("with --input-format stream-json the task comes as a user message on standard input, not as an argument")
	}
	// Control responses go out through the face's encoder, from the
	// reader's goroutine too: it is made before the reader starts.
	if face.enc == nil {
		face.enc = newStreamEncoder(face.Stdout)
	}
	enc := face.enc
	in := readClaudeInput(os.Stdin, enc.value, func(s string) { fmt.Fprintln(face.Stderr, "ralph: "+s) })
	first, ok := in.next(ctx)
	if !ok {
		return "", false, errors.New("standard input ended before a user message came (--input-format stream-json reads the task from it)")
	}
	*task, face.more = first, in.next
	return "", true, nil
}
