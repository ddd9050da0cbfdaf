package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/control"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// SteerHelp is the shared part of the help of ralph stop, say, pause,
// continue and answer.
const SteerHelp = `It talks to the ralph running in this project (ralph run, a one-shot task,
a script or the chat shell) through its control socket (in $XDG_RUNTIME_DIR/ralph,
else ralph's state directory; never in the project), which only the user
running that ralph may use. The running ralph answers in
one sentence, printed here.

When more than one ralph runs here (a chat open at its prompt and a ralph
run beside it), the one working gets the request; a chat idle at its prompt
never takes what was meant for a run. When two are working, you are asked
which at a terminal; without one, --pid names it.

Exit codes: 0 delivered, 1 no ralph is running here (or it could not take the
request; the sentence says why), 2 a request it cannot take as given (or two
ralphs work here and --pid does not say which).`

// Steer sends one request to the ralph running in the project (the one
// working, or r.PID's) and prints its reply: on stdout when it was
// delivered (exit 0), on stderr when it was not (exit 1) or the request was
// wrong (exit 2). With --json the reply object goes to stdout whatever it
// says.
func (r Records) Steer(ctx context.Context, req control.Request) int {
	p, err := r.findRalph(ctx)
	var reply control.Reply
	if err == nil {
		reply, err = control.CallPeer(ctx, p, req)
	}
	if err != nil {
		msg := r.notReached(err)
		fmt.Fprintln(r.Err, "ralph: "+text.StripControls(msg))
		if r.JSON {
			_ = r.writeJSON(control.Reply{Text: msg})
		}
		if errors.Is(err, control.ErrAmbiguous) {
			return ExitUsage
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

// findRalph is the ralph the control commands reach (control.Find): the
// one working in the project, or r.PID's. When two work, a person at a
// terminal is asked which; without one it is ErrAmbiguous, whose sentence
// (notReached) names --pid. A chat idle at its prompt never stands in for
// a ralph that holds the project lock and does not answer: the request
// was meant for that one.
func (r Records) findRalph(ctx context.Context) (control.Peer, error) {
	p, err := control.Find(ctx, control.Where{Root: r.Root, PID: r.PID})
	var amb *control.AmbiguousError
	if errors.As(err, &amb) && r.Term.InTTY && r.Term.In != nil {
		return r.choose(amb)
	}
	if err != nil || p.Working || r.PID != 0 {
		return p, err
	}
	if info, state, _ := memory.ReadLock(r.Fs, r.Root); state == memory.LockHeld && info.PID != p.PID {
		return control.Peer{}, control.ErrNotRunning
	}
	return p, nil
}

// choose asks the person at the terminal which of the ralphs they mean.
func (r Records) choose(amb *control.AmbiguousError) (control.Peer, error) {
	fmt.Fprintf(r.Err, "ralph: %s; which one?\n", text.StripControls(amb.Error()))
	for i, p := range amb.Peers {
		fmt.Fprintf(r.Err, "  %d) %s\n", i+1, text.StripControls(p.Describe()))
	}
	fmt.Fprintf(r.Err, "number (1-%d, Enter for none): ", len(amb.Peers))
	line, _ := bufio.NewReader(r.Term.In).ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(terminal.WithoutAnswers(line)))
	if err != nil || n < 1 || n > len(amb.Peers) {
		return control.Peer{}, amb
	}
	return amb.Peers[n-1], nil
}

// notReached is the sentence for a request that reached no ralph. The
// lock tells a project nobody works in from a ralph that does not answer
// (one too old to have a control socket, or one on another host).
func (r Records) notReached(err error) string {
	var amb *control.AmbiguousError
	if errors.As(err, &amb) {
		return amb.Error() + fmt.Sprintf("; name one with --pid (e.g. --pid %d)", amb.Peers[0].PID)
	}
	if !errors.Is(err, control.ErrNotRunning) {
		return err.Error()
	}
	if r.PID != 0 {
		return fmt.Sprintf("no ralph with pid %d is running in %s", r.PID, r.Root)
	}
	info, state, _ := memory.ReadLock(r.Fs, r.Root)
	switch state {
	case memory.LockHeld:
		return fmt.Sprintf("the ralph working here (pid %d) does not answer on a control socket in %s; it may be an older ralph without one", info.PID, control.SocketDir(r.Root))
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
