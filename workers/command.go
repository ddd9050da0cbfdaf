package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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
	// drainLimit bounds the wait for output still in the pipe once the
	// grace has passed (drain).
	drainLimit = 2 * time.Second

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
func (w *Workspace) execute(ctx context.Context, dir, command string, timeout time.Duration, policy *sandbox.Policy) Result {
	cmd, err := w.shellCommand(dir, command, policy != nil)
	if err != nil {
		return errResult("command was not run: %v", err)
	}
	res, _ := w.executeCmd(ctx, cmd, timeout, policy)
	return res
}

// shellCommand is the model's command line as the shell runs it in dir
// ("" for the project root), in the foreground or the background, with
// the session's variables (SessionEnv) over the commands' environment:
// those of the sandbox's layer only when it runs under the session's
// policy, never when the person let it out for one call (they approved
// the line they read, not an LD_PRELOAD a project's hook chose). Under
// danger-full-access the policy confines nothing: the person chose to run
// the model's commands as themselves, and the layer adds nothing the
// model's command line could not set.
func (w *Workspace) shellCommand(dir, command string, sandboxed bool) (*exec.Cmd, error) {
	wd, err := w.commandDir(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(w.shell, "-c", command)
	cmd.Dir = wd
	cmd.Env = w.env // nil inherits os.Environ()
	if w.env != nil {
		cmd.Env = w.opts.SessionEnv.Apply(w.env, sandboxed)
	}
	return cmd, nil
}

// commandDir is where a command runs: the project root for "", else dir,
// which the caller resolved through the door (Resolve: absolute, links
// resolved) and which is checked again here, so no command starts in a
// directory outside the root, in .git or .ralph, or one kept from the
// model. The sandbox confines the command to the project as it would in
// the root; the directory changes only where it starts.
func (w *Workspace) commandDir(dir string) (string, error) {
	if dir == "" {
		return w.root, nil
	}
	clean := filepath.Clean(dir)
	rel, err := filepath.Rel(w.root, clean)
	switch {
	case !filepath.IsAbs(dir) || err != nil || !isInside(w.root, clean):
		return "", fmt.Errorf("its directory %s is outside the project root", dir)
	case IsProtected(rel):
		return "", fmt.Errorf("its directory %s is in .git or .ralph", filepath.ToSlash(rel))
	case w.Kept(clean):
		return "", fmt.Errorf("its directory %s is kept from you", filepath.ToSlash(rel))
	}
	return clean, nil
}

// executeCmd is execute of a command already made (its program, dir and
// environment set); started reports whether it ran at all.
func (w *Workspace) executeCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, policy *sandbox.Policy) (res Result, started bool) {
	out := NewHeadTailBuffer(w.maxOut)
	r, failed := w.launch(ctx, cmd, policy, out, false)
	if r == nil {
		return failed, false
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var outcome string
	select {
	case <-r.ld.exited():
	case <-timer.C:
		outcome = fmt.Sprintf("command timed out after %s; its process group was killed", FormatSeconds(timeout))
	case <-ctx.Done():
		outcome = "command cancelled; its process group was killed"
	}
	grace := drainGrace
	if ctx.Err() != nil {
		grace = cancelDrainGrace // the caller is waiting to move on
	}
	status, waitErr := r.end(outcome != "", grace)

	text := strings.ToValidUTF8(out.String(), "\uFFFD")
	if outcome != "" {
		if text != "" {
			outcome += "\noutput so far:\n" + text
		}
		res = Result{Output: outcome, IsError: true}
	} else {
		res = commandResult(text, status, waitErr)
	}
	return r.confined(res, text, outcome != ""), true
}

// running is a command launch started: its leader, whose pid is its
// process group's id, and the goroutine that copies its output.
type running struct {
	ld     leader
	pgid   int
	pr     *os.File
	token  string
	policy *sandbox.Policy
	// drained is closed when the copy of the output has stopped.
	drained chan struct{}
	// copied counts the bytes of output copied so far (drain).
	copied atomic.Int64
}

// launch starts cmd in a process group of its own, confined by policy
// unless that is nil or full access, with a goroutine copying its stdout
// and stderr into out (the goroutine's alone: out need not be safe for
// concurrent use unless its owner reads it while the command runs).
// livesAcross marks a command that runs beside the next ones (a
// background command), which the Landlock-only sandbox refuses
// (sandbox.ErrLivesAcrossCommands). On failure it returns the result
// that tells the model why, and a nil running. Every command of the
// model's, in the foreground or the background, starts here.
func (w *Workspace) launch(ctx context.Context, cmd *exec.Cmd, policy *sandbox.Policy, out io.Writer, livesAcross bool) (*running, Result) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, errResult("cannot start command: %v", err)
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
		ld, err = w.startConfined(ctx, cmd, pw, livesAcross)
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
		if errors.Is(err, sandbox.ErrLivesAcrossCommands) {
			return nil, errResult("%s", ErrBackgroundLandlockOnly)
		}
		if errors.Is(err, sandbox.ErrUnavailable) {
			return nil, sandboxUnavailable(err)
		}
		if ctx.Err() != nil {
			return nil, errResult("command cancelled before it ran")
		}
		return nil, errResult("cannot start command: %v", err)
	}
	r := &running{ld: ld, pgid: ld.pid(), pr: pr, token: token, policy: policy, drained: make(chan struct{})}
	go func() {
		defer close(r.drained)
		if readerStarts != nil {
			readerStarts()
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			r.copied.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	return r, Result{}
}

// readerStarts, when set, runs as the reader of a command's output
// starts: a test's stand-in for a busy machine that runs it late.
var readerStarts func()

// end kills what is left of the command's group, reaps its leader and
// waits up to grace for its output to be copied; killed says ralph ended
// the command (a timeout, a stop), whose processes that left the group
// are then hunted down too. It returns the leader's wait status.
func (r *running) end(killed bool, grace time.Duration) (syscall.WaitStatus, error) {
	status, waitErr := killAndReap(r.ld, r.pgid)
	if r.token != "" && killed {
		stopEscaped(r.token, reapTimeout)
	}
	// Every group member is dead, so the pipe reaches EOF as soon as the
	// kernel has closed their descriptors. A process that escaped the group
	// may still hold it; stop reading after a short grace instead of hanging.
	// A caller in a hurry (a cancel's short grace) waits for nothing
	// more: a process that left the group may keep the pipe full.
	limit := drainLimit
	if grace < drainGrace {
		limit = 0
	}
	r.drain(grace, limit)
	r.pr.Close()
	return status, waitErr
}

// drain waits for the output pipe to reach EOF, and stops the reading
// once a grace passes without it. What the command's group wrote before
// it ended is copied first, whatever the grace: on a busy machine the
// reader may not run within 50 ms of the command's end, and the reading
// stopped then lost what the command printed ("(no output)" from a pwd).
// That is the pipe's unread bytes as drain starts, the group being dead;
// what a process that left the group writes after them is not waited
// for, so one that keeps the pipe full costs the grace, as before. The
// wait is at most limit (none: the reading stops at the grace).
func (r *running) drain(grace, limit time.Duration) {
	owed := r.copied.Load() + int64(pipePending(r.pr))
	until := time.Now().Add(limit)
	wait := time.NewTimer(grace)
	defer wait.Stop()
	for {
		select {
		case <-r.drained:
			return
		case <-wait.C:
		}
		if r.copied.Load() < owed && time.Now().Before(until) {
			wait.Reset(grace)
			continue
		}
		r.pr.SetReadDeadline(time.Now())
		<-r.drained
		return
	}
}

// confined adds what the sandbox has to say to the result of a command
// that ended (see confined), output being what it printed.
func (r *running) confined(res Result, output string, killed bool) Result {
	if c, ok := r.ld.(*confinedLeader); ok {
		return confined(res, r.policy, c.outcome, output, killed)
	}
	return res
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
	return w.ExecIn(ctx, "", command, timeout, sandboxed)
}

// ExecIn is Exec with the command started in dir, a directory of the
// project resolved through the door (Resolve); "" is the project root.
// The sandbox is the same wherever it starts.
func (w *Workspace) ExecIn(ctx context.Context, dir, command string, timeout time.Duration, sandboxed bool) Result {
	var policy *sandbox.Policy
	if sandboxed {
		policy = w.policy
	}
	return w.execute(ctx, dir, command, timeout, policy)
}

// WithheldNotice is the key of NoteWithheld's notice in the person's
// record of notices (memory/shown).
const WithheldNotice = "commands-withheld"

// NoteWithheld tells the person, after the first command that ran, which
// of their variables commands go without and how to pass one: a test
// suite that needs DATABASE_URL fails otherwise with no word why. Names
// only, never values; once for w and every Workspace made with its
// Options, and once per person for each set of names (Options.Seen), not
// in every session. A provider's setting (OPENAI_BASE_URL) is said to be
// one, not a credential: it is withheld by its prefix, since such
// settings may carry a key.
func (w *Workspace) NoteWithheld() {
	if len(w.opts.Withheld)+len(w.opts.WithheldGit) == 0 || w.opts.Notify == nil || w.opts.withheldOnce == nil {
		return
	}
	w.opts.withheldOnce.Do(func() {
		if !w.opts.Seen.Fresh(WithheldNotice, append(slices.Clone(w.opts.Withheld), w.opts.WithheldGit...)) {
			return
		}
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
