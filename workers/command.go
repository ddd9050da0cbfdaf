package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

const (
	// drainGrace is how long to wait for the output pipe to reach EOF once
	// the process group is dead. Only processes that left the group (for
	// example with setsid) can still hold the pipe then, and they must not
	// keep the call waiting.
	drainGrace       = 50 * time.Millisecond
	cancelDrainGrace = 5 * time.Millisecond

	// reapTimeout bounds the wait for killed group members to die, for the
	// rare process stuck in uninterruptible sleep.
	reapTimeout = 2 * time.Second
)

// execute runs command in its own process group, confined by policy
// unless that is nil or full access, and guarantees that nothing it
// started is alive when it returns, whichever way the command ends:
// normal exit, timeout or cancellation. Inside the sandbox the command's
// PID namespace or reaper sees to processes that left the group; outside
// it, the token in their environment does.
func (w *Workspace) execute(ctx context.Context, command string, timeout time.Duration, policy *sandbox.Policy) Result {
	cmd := exec.Command(w.shell, "-c", command)
	cmd.Dir = w.root
	cmd.Env = w.env // nil inherits os.Environ()
	res, _ := w.executeCmd(ctx, cmd, timeout, policy)
	return res
}

// executeCmd is execute of a command already made (its program, dir and
// environment set); started reports whether it ran at all.
func (w *Workspace) executeCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, policy *sandbox.Policy) (res Result, started bool) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return errResult("cannot start command: %v", err), false
	}
	// Passing *os.File makes the child write straight into the pipe, with no
	// copying goroutine inside os/exec that Wait would block on while a
	// background job keeps the pipe open.
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.SysProcAttr = procAttr()
	var ld leader
	var token string
	if policy.Confines() {
		ld, err = w.startConfined(ctx, cmd, pw)
	} else {
		// Outside the sandbox no PID namespace or reaper ends what the
		// command started; a token in its environment marks its
		// processes wherever they go (setsid, a double fork), as for
		// the external agents, and they are killed when ralph stops the
		// command. The scan of /proc that takes costs more than a short
		// command, so a command that ends by itself leaves what it
		// started outside its group to the person, as their shell would.
		var tok [8]byte
		_, _ = rand.Read(tok[:])
		token = hex.EncodeToString(tok[:])
		cmd.Env = append(cmd.Environ(), agentTokenVar+"="+token)
		ld, err = startLocal(cmd)
	}
	pw.Close() // only the children hold the write end now
	if err != nil {
		pr.Close()
		if errors.Is(err, sandbox.ErrUnavailable) {
			return sandboxUnavailable(err), false
		}
		if ctx.Err() != nil {
			return errResult("command cancelled before it ran"), false
		}
		return errResult("cannot start command: %v", err), false
	}
	pgid := ld.pid()

	out := NewHeadTailBuffer(w.maxOut)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var outcome string
	select {
	case <-ld.exited():
	case <-timer.C:
		outcome = fmt.Sprintf("command timed out after %s; its process group was killed", FormatSeconds(timeout))
	case <-ctx.Done():
		outcome = "command cancelled; its process group was killed"
	}
	status, waitErr := killAndReap(ld, pgid)
	if token != "" && outcome != "" {
		stopEscaped(token, reapTimeout)
	}

	// Every group member is dead, so the pipe reaches EOF as soon as the
	// kernel has closed their descriptors. A process that escaped the group
	// may still hold it; stop reading after a short grace instead of hanging.
	grace := drainGrace
	if ctx.Err() != nil {
		grace = cancelDrainGrace // the caller is waiting to move on
	}
	select {
	case <-drained:
	case <-time.After(grace):
		pr.SetReadDeadline(time.Now())
		<-drained
	}
	pr.Close()

	text := strings.ToValidUTF8(out.String(), "\uFFFD")
	if outcome != "" {
		if text != "" {
			outcome += "\noutput so far:\n" + text
		}
		res = Result{Output: outcome, IsError: true}
	} else {
		res = commandResult(text, status, waitErr)
	}
	if c, ok := ld.(*confinedLeader); ok {
		res = confined(res, policy, c.outcome, text, outcome != "")
	}
	return res, true
}

// commandResult reports the output and, for failures, how the command ended.
func commandResult(text string, ws syscall.WaitStatus, waitErr error) Result {
	var status string
	switch {
	case waitErr != nil:
		status = waitErr.Error()
	case ws.Signaled():
		status = "terminated by signal " + ws.Signal().String()
	case ws.ExitStatus() != 0:
		status = fmt.Sprintf("exit status %d", ws.ExitStatus())
	default:
		if text == "" {
			return Result{Output: "(no output)"}
		}
		return Result{Output: text}
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return Result{Output: text + status, IsError: true}
}

// FormatSeconds prints whole seconds as "120s" rather than "2m0s", which is
// how the model passed them in timeout_s.
func FormatSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// killAndReap ends a process group whose leader ld has not been reaped:
// the leader is a zombie or still running, so its pid cannot have been
// reused and -pgid names only this group. Killing it also ends background
// jobs left behind by a leader that exited normally. It returns the
// leader's wait status once no member is alive (or after reapTimeout).
func killAndReap(ld leader, pgid int) (syscall.WaitStatus, error) {
	_ = signalGroup(pgid, syscall.SIGKILL)
	select {
	case <-ld.exited():
	case <-time.After(reapTimeout):
		ld.abandon()
		<-ld.exited()
	}
	status, err := ld.wait()
	waitGroupGone(pgid, reapTimeout)
	// Background jobs whose shell died first were reparented to ralph when
	// it is a subreaper (a task loop with external agents runs --verify
	// through here); reap them so they do not stay zombies.
	reapGroup(pgid)
	return status, err
}

// Exec runs the model's command line in its own process group, in the
// sandbox when sandboxed (and the sandbox confines anything), else as
// the person's shell would; nothing it started is alive when it returns.
// It asks nobody: the tool that calls it has had the command approved.
func (w *Workspace) Exec(ctx context.Context, command string, timeout time.Duration, sandboxed bool) Result {
	var policy *sandbox.Policy
	if sandboxed {
		policy = w.policy
	}
	return w.execute(ctx, command, timeout, policy)
}

// NoteWithheld tells the person, after the session's first command,
// which of their variables commands go without and how to pass one: a
// test suite that needs DATABASE_URL fails otherwise with no word why.
// Names only, never values; once for w and every Workspace made with its
// Options. A provider's setting (OPENAI_BASE_URL) is said to be one, not
// a credential: it is withheld by its prefix, since such settings may
// carry a key.
func (w *Workspace) NoteWithheld() {
	if len(w.opts.Withheld)+len(w.opts.WithheldGit) == 0 || w.opts.Notify == nil || w.opts.withheldOnce == nil {
		return
	}
	w.opts.withheldOnce.Do(func() {
		var creds []string
		for _, n := range w.opts.Withheld {
			if !slices.Contains(w.opts.Settings, n) {
				creds = append(creds, n)
			}
		}
		var parts []string
		if len(creds) > 0 {
			parts = append(parts, fmt.Sprintf("%s, which %s like credentials", strings.Join(creds, ", "), text.Plural(len(creds), "looks", "look")))
		}
		if len(w.opts.Settings) > 0 {
			parts = append(parts, fmt.Sprintf("%s, provider and cloud settings (every AWS_, AZURE_, OPENAI_ and ANTHROPIC_ variable is withheld, as some carry keys)",
				strings.Join(w.opts.Settings, ", ")))
		}
		var say string
		if len(parts) > 0 {
			say = fmt.Sprintf("commands run without %s; to pass one, list it in your user config: shell_env = [%q]",
				strings.Join(parts, ", nor "), w.opts.Withheld[0])
		}
		if g := w.opts.WithheldGit; len(g) > 0 {
			why := "which configure git for every command and may carry a credential; shell_env cannot pass them"
			if say == "" {
				say = fmt.Sprintf("commands run without %s, %s", strings.Join(g, ", "), why)
			} else {
				say += fmt.Sprintf("; nor do they get %s, %s", strings.Join(g, ", "), why)
			}
		}
		w.opts.Notify(say)
	})
}
