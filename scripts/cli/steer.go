package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
)

// SteerHelp is the shared part of the help of ralph stop, say, pause,
// continue and answer.
const SteerHelp = `It talks to the ralph running in this project (ralph run, a one-shot task,
a script or the chat shell) through its control socket (in $XDG_RUNTIME_DIR/ralph,
else ralph's state directory; never in the project), which only the user
running that ralph may use. The running ralph answers in
one sentence, printed here.

Exit codes: 0 delivered, 1 no ralph is running here (or it could not take the
request; the sentence says why), 2 a request it cannot take as given.`

// Steer sends one request to the ralph running in the project and prints
// its reply: on stdout when it was delivered (exit 0), on stderr when it
// was not (exit 1) or the request was wrong (exit 2). With --json the reply
// object goes to stdout whatever it says.
func (r Records) Steer(ctx context.Context, req control.Request) int {
	reply, err := control.Call(ctx, r.Root, req)
	if err != nil {
		fmt.Fprintln(r.Err, "ralph: "+text.StripControls(r.notReached(err)))
		if r.JSON {
			_ = r.writeJSON(control.Reply{Text: r.notReached(err)})
		}
		return ExitFailed
	}
	code := ExitOK
	switch {
	case reply.Bad:
		code = ExitUsage
	case !reply.OK:
		code = ExitFailed
	}
	if r.JSON {
		_ = r.writeJSON(reply)
		return code
	}
	// The reply may hold a question's text: made visible by the running
	// ralph, stripped here again, since the socket is not the only way
	// such text could be written.
	msg := text.StripControls(reply.Text)
	if code == ExitOK {
		fmt.Fprintln(r.Out, msg)
	} else {
		fmt.Fprintln(r.Err, "ralph: "+msg)
	}
	return code
}

// notReached is the sentence for a request that reached no ralph. The
// lock tells a project nobody works in from a ralph that does not answer
// (one too old to have a control socket, or one on another host).
func (r Records) notReached(err error) string {
	if !errors.Is(err, control.ErrNotRunning) {
		return err.Error()
	}
	info, state, _ := memory.ReadLock(r.Fs, r.Root)
	switch state {
	case memory.LockHeld:
		return fmt.Sprintf("the ralph working here (pid %d) does not answer on %s; it may be an older ralph without one", info.PID, control.SocketPath(r.Root))
	case memory.LockForeign:
		return fmt.Sprintf("the ralph working here runs on host %s; steer it from there", info.Hostname)
	}
	return "no ralph is running in " + r.Root
}

// ParseAnswer reads an answer given to ralph answer before it is sent:
// the words of an approval (y, yes, n, no, a, always) in their one form,
// anything else as it is, for a model's question (ask_user) and a choice
// by its number. Whether it answers the question waiting is the running
// ralph's to say, since only it knows the question.
func ParseAnswer(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return "", fmt.Errorf("the answer is empty: give y, n, always, a choice's number or your words")
	case "y", "yes":
		return "y", nil
	case "n", "no":
		return "n", nil
	case "a", "always":
		return "always", nil
	}
	return s, nil
}
