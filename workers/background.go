package workers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Background commands are the model's commands that run beside its
// turns (run_command with background: true): started where and as a
// foreground command starts (launch), read a piece at a time, stopped by
// the model, and every one of them killed when the session ends, at a
// hard stop (StopBackground) and when the Workspace closes; in the task
// loop, those of an attempt when it ends (StopBackgroundOf). Were ralph
// itself killed, the parent-death signal ends them as it ends a
// foreground command: the sandbox's helper dies with ralph and takes
// every command's PID namespace (or reaper) with it; outside the sandbox
// the shell dies with ralph, and what the shell started in its group is
// left, as for a foreground command.

const (
	// MaxBackground is how many background commands may run at once in
	// one Workspace: each holds a process group and a buffer.
	MaxBackground = 8
	// MaxOutputWait caps how long one read of a background command's
	// output waits for the command to end.
	MaxOutputWait = 600 * time.Second
	// firstOutputWait is how long a start waits for the command's first
	// lines, or its end, before it answers.
	firstOutputWait = 300 * time.Millisecond
)

// ErrBackgroundLandlockOnly is why no command runs in the background in
// the Landlock-only sandbox.
var ErrBackgroundLandlockOnly = errors.New("background commands cannot run in the Landlock-only sandbox, which puts .git/hooks, .git/config and .ralph/ back only after each command ends; run it without background, or the user can allow user namespaces for the full sandbox (docs/sandbox.md)")

// ErrNoBackground is the error of a read or a stop of an id that names no
// background command.
var ErrNoBackground = errors.New("no background command has this id")

// background is a Workspace's background commands.
type background struct {
	mu     sync.Mutex
	next   int
	cmds   []*bgCommand
	closed bool
}

// bgCommand is one background command and what it printed since it was
// last read.
type bgCommand struct {
	id      string
	command string
	// dir is where it runs, relative to the root ("." for the root).
	dir string
	// owner is the agent that started it (tools.Caller's Agent): a task
	// attempt's commands die when that attempt ends (StopBackgroundOf).
	owner   string
	started time.Time
	run     *running
	// stop is closed to make the command's watcher kill it.
	stop     chan struct{}
	stopOnce sync.Once

	mu sync.Mutex
	// unread is what the command printed since the last read, its head
	// and tail kept (HeadTailBuffer) so memory stays bounded.
	unread *HeadTailBuffer
	max    int
	// ended is closed once the command has ended and status is set.
	ended  chan struct{}
	status string // how it ended, "" for a clean exit
	failed bool
	// told says the model has read the end: the command is then
	// forgotten.
	told bool
}

// Write takes the command's output (the launch's copying goroutine).
func (c *bgCommand) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unread.Write(p)
}

// take returns what the command printed since the last read, stripped
// of terminal control sequences (a progress bar's carriage returns, a
// colour), and starts a new buffer.
func (c *bgCommand) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.unread.String()
	c.unread = NewHeadTailBuffer(c.max)
	return text.StripControls(s)
}

// BackgroundInfo is what the model is told of a background command.
type BackgroundInfo struct {
	ID      string
	Command string
	// Dir is the directory it runs in, relative to the project root, ""
	// for the root.
	Dir     string
	Started time.Time
	// Ended says it ended and its end was not read yet; Status says how
	// ("exit status 1"), "" for a clean exit.
	Ended  bool
	Status string
}

// StartBackground starts command as a background command, in the
// sandbox when sandboxed (and the sandbox confines anything), as Exec
// starts it in the foreground; the caller has had it approved. It
// returns at once, with the command's id and its first lines if any.
// owner is the agent that starts it, whose end may end it
// (StopBackgroundOf).
func (w *Workspace) StartBackground(command string, sandboxed bool, owner string) Result {
	return w.StartBackgroundIn("", command, sandboxed, owner)
}

// StartBackgroundIn is StartBackground with the command started in dir,
// a directory of the project resolved through the door (Resolve); "" is
// the project root.
func (w *Workspace) StartBackgroundIn(dir, command string, sandboxed bool, owner string) Result {
	cmd, err := w.shellCommand(dir, command, sandboxed)
	if err != nil {
		return errResult("command was not run: %v", err)
	}
	var policy *sandbox.Policy
	if sandboxed {
		policy = w.policy
	}
	b := &w.bg
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return errResult("command was not run: the session is ending")
	}
	if n := b.runningLocked(); n >= MaxBackground {
		b.mu.Unlock()
		return errResult("command was not run: %s already run in the background, the most at once; stop one with stop_command first", text.Counted(n, "command", "commands"))
	}
	b.next++
	id := "bg_" + strconv.Itoa(b.next)
	b.mu.Unlock()

	c := &bgCommand{id: id, command: command, dir: w.RelSlash(cmd.Dir), owner: owner, started: time.Now(), stop: make(chan struct{}), ended: make(chan struct{}),
		unread: NewHeadTailBuffer(w.maxOut), max: w.maxOut}
	// The start is not the call's: the command outlives the call that
	// started it, and only a stop, the session's end or ralph's ends it.
	r, failed := w.launch(context.Background(), cmd, policy, c, true)
	if r == nil {
		return failed
	}
	c.run = r
	b.mu.Lock()
	closed := b.closed
	b.cmds = append(b.cmds, c)
	b.mu.Unlock()
	go c.watch()
	if closed {
		// The session ended while this one started: it goes with it.
		c.kill()
	}

	select {
	case <-c.ended:
	case <-time.After(firstOutputWait):
	}
	out := fmt.Sprintf("started %s in the background; read its output with command_output, stop it with stop_command", id)
	if first := c.take(); first != "" {
		out += "\nfirst output:\n" + first
	}
	select {
	case <-c.ended:
		c.mu.Lock()
		c.told = true
		out += "\n" + c.endLine()
		c.mu.Unlock()
		w.bg.forget(c)
	default:
	}
	return Result{Output: out, BackgroundID: id}
}

// watch waits for the command to end by itself or be stopped, then ends
// what is left of its group and keeps how it ended.
func (c *bgCommand) watch() {
	killed := false
	select {
	case <-c.run.ld.exited():
	case <-c.stop:
		killed = true
	}
	status, waitErr := c.run.end(killed, drainGrace)
	res := commandResult("", status, waitErr)
	if killed {
		res = Result{Output: "stopped; its process group was killed", IsError: true}
	}
	// What the sandbox has to say (a guarded path it put back) is
	// judged from the output the model has yet to read.
	c.mu.Lock()
	pending := c.unread.String()
	c.mu.Unlock()
	res = c.run.confined(res, pending, killed)
	c.mu.Lock()
	if res.Output != "(no output)" {
		c.status = res.Output
	}
	c.failed = res.IsError
	c.mu.Unlock()
	close(c.ended)
}

// endLine says how the command ended; c.mu is held.
func (c *bgCommand) endLine() string {
	if c.status == "" {
		return "[" + c.id + " ended: exit status 0]"
	}
	return "[" + c.id + " ended: " + c.status + "]"
}

// kill makes the watcher kill the command's group; it returns at once.
func (c *bgCommand) kill() { c.stopOnce.Do(func() { close(c.stop) }) }

// runningLocked counts the commands not yet ended; b.mu is held.
func (b *background) runningLocked() int {
	n := 0
	for _, c := range b.cmds {
		select {
		case <-c.ended:
		default:
			n++
		}
	}
	return n
}

// find returns the command id names, or ErrNoBackground.
func (b *background) find(id string) (*bgCommand, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id = strings.TrimSpace(id)
	for _, c := range b.cmds {
		if c.id == id {
			return c, nil
		}
	}
	return nil, ErrNoBackground
}

// forget drops a command whose end the model has read.
func (b *background) forget(c *bgCommand) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cmds = slices.DeleteFunc(b.cmds, func(x *bgCommand) bool { return x == c })
}

// unknown is the result of a read or stop of an id that names nothing.
func (b *background) unknown(id string) Result {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, c := range b.cmds {
		ids = append(ids, c.id)
	}
	known := "none runs now"
	if len(ids) > 0 {
		known = "there are " + strings.Join(ids, ", ")
	}
	return errResult("%q names no background command (%s); an id is given when run_command starts one with background: true", text.Visible(id), known)
}

// BackgroundOutput returns what the background command id printed since
// it was last read, after waiting up to wait for it to end (a hard stop
// cuts the wait); once it ended, how. A filter keeps only the lines it
// matches; the others are read all the same.
func (w *Workspace) BackgroundOutput(ctx context.Context, id string, wait time.Duration, filter *regexp.Regexp) Result {
	c, err := w.bg.find(id)
	if err != nil {
		return w.bg.unknown(id)
	}
	if wait > 0 {
		t := time.NewTimer(min(wait, MaxOutputWait))
		select {
		case <-c.ended:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	out := c.take()
	if filter != nil {
		out = keepMatching(out, filter)
	}
	var b strings.Builder
	if out == "" {
		b.WriteString("(no new output)")
	} else {
		b.WriteString(out)
	}
	select {
	case <-c.ended:
		c.mu.Lock()
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString(c.endLine())
		c.told = true
		failed := c.failed
		c.mu.Unlock()
		w.bg.forget(c)
		return Result{Output: b.String(), IsError: failed}
	default:
	}
	fmt.Fprintf(&b, "\n[%s is still running, for %s]", c.id, since(c.started))
	return Result{Output: b.String()}
}

// keepMatching keeps the lines of s that re matches.
func keepMatching(s string, re *regexp.Regexp) string {
	var kept []string
	for line := range strings.Lines(s) {
		if re.MatchString(strings.TrimRight(line, "\n")) {
			kept = append(kept, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(kept, "\n")
}

// StopBackgroundCommand kills the background command id's whole process
// group and returns what it printed since it was last read.
func (w *Workspace) StopBackgroundCommand(id string) Result {
	c, err := w.bg.find(id)
	if err != nil {
		return w.bg.unknown(id)
	}
	select {
	case <-c.ended:
		// It ended by itself first: say so, as a read would.
		res := w.BackgroundOutput(context.Background(), id, 0, nil)
		res.Output = c.id + " had already ended\n" + res.Output
		return res
	default:
	}
	c.kill()
	<-c.ended
	out := c.take()
	w.bg.forget(c)
	s := "stopped " + c.id + "; its process group was killed"
	if out != "" {
		s += "\noutput since the last read:\n" + out
	}
	return Result{Output: s}
}

// Background lists the background commands still running, and those
// that ended whose end the model has not read, in the order they
// started.
func (w *Workspace) Background() []BackgroundInfo {
	w.bg.mu.Lock()
	cmds := slices.Clone(w.bg.cmds)
	w.bg.mu.Unlock()
	var out []BackgroundInfo
	for _, c := range cmds {
		info := BackgroundInfo{ID: c.id, Command: c.command, Started: c.started}
		if c.dir != "." {
			info.Dir = c.dir
		}
		select {
		case <-c.ended:
			c.mu.Lock()
			info.Ended, info.Status = !c.told, c.status
			told := c.told
			c.mu.Unlock()
			if told {
				continue
			}
		default:
		}
		out = append(out, info)
	}
	return out
}

// StopBackground kills every background command and waits for each to
// end: at a hard stop, when the conversation they belong to ends, and
// when the Workspace closes. It reports how many were still running.
func (w *Workspace) StopBackground() int {
	return w.bg.stopAll(false)
}

// StopBackgroundOf kills the background commands owner started and waits
// for each to end: when the task attempt of that agent ends, before its
// work is verified, so that none runs on into the verify commands or the
// next task. It reports how many were still running.
func (w *Workspace) StopBackgroundOf(owner string) int {
	return w.bg.stop(func(c *bgCommand) bool { return c.owner == owner }, false)
}

// stopAll kills every command and forgets them; closing refuses every
// later start.
func (b *background) stopAll(closing bool) int {
	return b.stop(func(*bgCommand) bool { return true }, closing)
}

// stop kills the commands which picks and forgets them; closing refuses
// every later start.
func (b *background) stop(which func(*bgCommand) bool, closing bool) int {
	b.mu.Lock()
	var cmds, kept []*bgCommand
	for _, c := range b.cmds {
		if which(c) {
			cmds = append(cmds, c)
		} else {
			kept = append(kept, c)
		}
	}
	b.cmds = kept
	if closing {
		b.closed = true
	}
	b.mu.Unlock()
	n := 0
	for _, c := range cmds {
		select {
		case <-c.ended:
			continue
		default:
		}
		n++
		c.kill()
	}
	for _, c := range cmds {
		<-c.ended
	}
	return n
}

// since is how long ago t was, in whole seconds.
func since(t time.Time) string {
	return FormatSeconds(time.Since(t).Truncate(time.Second))
}
