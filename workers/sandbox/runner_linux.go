package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// HelperArg is the hidden first argument that makes ralph's binary act as
// the sandbox helper.
const HelperArg = "__sandbox"

const (
	// helperStartWait bounds the wait for a new helper to confine itself
	// and say so. It takes a few milliseconds; the bound is for a machine
	// so loaded that nothing else would work either.
	helperStartWait = 30 * time.Second
	// answerWait is how long the helper has to answer a request (a
	// start, a reap, an exit once the group was killed) before ralph
	// looks at it: one that a command stopped (SIGSTOP, or a tracer) is
	// killed and replaced then. One that is only slow, as on a machine
	// with tens of runnable processes per core, where an answer took
	// over 5 s and the command failed with "the sandbox helper was
	// stopped", is waited for, up to helperStartWait in all.
	answerWait = 5 * time.Second
)

// spec is the policy as the helper receives it: everything resolved to
// absolute paths by the parent, so the helper only acts.
type spec struct {
	Mode Mode `json:"mode"`
	// Write lists the directories where writes are allowed.
	Write []string `json:"write,omitempty"`
	// Pin lists directories bound onto themselves so that they cannot be
	// renamed or replaced (a mount point is busy): .git, whose hooks and
	// config would otherwise be swapped by renaming .git itself.
	Pin []string `json:"pin,omitempty"`
	// Protect lists existing paths bound read-only over themselves.
	Protect []string `json:"protect,omitempty"`
	// Kept lists the kept paths in the write directories (Policy.Keep):
	// writes are granted around them.
	Kept []string `json:"kept,omitempty"`
	// Network is false for a private network namespace.
	Network bool `json:"network"`
	// Mask lists the repository configuration files that hold a
	// credential, over which the helper binds a masked copy
	// (gitmask_linux.go); MaskSum is a digest of the copies, which only
	// makes the key change with them.
	Mask    []string `json:"mask,omitempty"`
	MaskSum string   `json:"maskSum,omitempty"`
	// Cover lists the paths the person's Read(…) deny rules name in the
	// directories commands may write, over which the helper binds a
	// cover no command may read (hiddenrules_linux.go); Hide those
	// elsewhere, which Landlock's read rules leave out as they leave out
	// HiddenPaths. The Landlock-only fallback has no Cover: there the
	// paths are in Kept and Hide (hiddenrules.go says what that costs).
	Cover []string `json:"cover,omitempty"`
	Hide  []string `json:"hide,omitempty"`
	// Landlocked is the sandbox without namespaces, where the kernel
	// allows none (see restore.go): no mounts, no network namespace;
	// Landlock alone confines, and shuts TCP off without the network.
	Landlocked bool `json:"landlocked,omitempty"`
	// absent lists guarded paths that did not exist when the spec was
	// made: a bind mount needs an existing path to cover, so a command
	// that creates one has it removed afterwards (Process.Wait).
	absent []string
}

// Runner starts commands under a policy. It keeps one helper process
// that confined itself once — namespaces, read-only mounts, Landlock —
// and starts every command inside that confinement, so a command costs a
// fork and exec as it would without the sandbox. Re-executing ralph for
// every command cost far more than the command itself (ralph's start-up).
// The helper is started on the first command and replaced when the
// project's guarded paths change (a .git created or removed), when it
// died, or when it stopped answering. Close stops it.
type Runner struct {
	policy *Policy
	// nested undoes what commands do to nested repositories'
	// configuration (workspace-write only; see nestedgit.go).
	nested *nestedGuard
	// repos finds the project's repositories for the masked copies of
	// their configuration: nested itself in workspace-write, a guard
	// that only looks otherwise.
	repos *nestedGuard

	mu     sync.Mutex
	cur    *server
	closed bool
	// guarded is set once the kernel refused the namespaces: the
	// sandbox runs on Landlock alone from then on, and restores the
	// protected paths after every command.
	guarded *guardedState
	// rec keeps the guards' record where the next ralph finds it should
	// this one be killed while a command runs (guardrecord.go); nil
	// where no guard acts.
	rec *recorder
	// absent are the last command's absent guarded paths, which a step's
	// record carries too, so that commands and steps share one record.
	absent []string
	// denied are the Read(…) deny rules' paths, resolved when a helper
	// is to start (deniedPaths); nil until then.
	denied *deniedPaths
}

// deniedPaths are the paths the Read(…) deny rules name, as
// Policy.deniedRead splits them.
type deniedPaths struct{ inWrite, elsewhere []string }

// deniedRead resolves the policy's Read(…) deny rules when no helper is
// running, the one that starts taking what exists then, and keeps what
// it found for the specs of the commands that helper runs: a rule
// matching names at any depth walks the project, which each command
// must not pay for.
func (r *Runner) deniedRead() deniedPaths {
	r.mu.Lock()
	d, running := r.denied, r.cur != nil
	r.mu.Unlock()
	if d != nil && running {
		return *d
	}
	in, out := r.policy.deniedRead()
	d = &deniedPaths{inWrite: in, elsewhere: out}
	r.mu.Lock()
	r.denied = d
	r.mu.Unlock()
	return *d
}

// NewRunner returns a runner for the policy; no process starts until the
// first command.
func NewRunner(p *Policy) *Runner {
	r := &Runner{policy: p}
	if p.Mode == WorkspaceWrite {
		r.nested = newNestedGuard(p.Root)
		r.repos = r.nested
		r.rec = newRecorder(p.Root, p.Notify)
	} else {
		r.repos = newNestedGuard(p.Root)
	}
	return r
}

// Start starts c confined by the policy, in a process group of its own
// whose id is the returned Process's Pid.
func (r *Runner) Start(ctx context.Context, c Command) (*Process, error) {
	if !r.policy.Confines() {
		return nil, errors.New("sandbox: the policy confines nothing")
	}
	// Primed first: its look finds the repositories whose configuration
	// the spec masks.
	if r.nested != nil {
		r.nested.prime()
	}
	s, key, err := r.spec()
	if err != nil {
		return nil, err
	}
	srv, err := r.server(ctx, s, key)
	if errors.Is(err, errNamespaces) && !s.Landlocked {
		// The first start to find no namespaces switches the runner to
		// Landlock alone; a start beside it (two hooks of one event, two
		// child agents' commands) found the same and must not fail for
		// having lost that race: both go on with the fallback.
		r.fallBack()
		if s, key, err = r.spec(); err != nil {
			return nil, err
		}
		srv, err = r.server(ctx, s, key)
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	g := r.guarded
	r.mu.Unlock()
	if g != nil && s.Mode == WorkspaceWrite && c.LivesAcrossCommands {
		srv.release()
		return nil, ErrLivesAcrossCommands
	}
	if g != nil && s.Mode == WorkspaceWrite {
		g.begin()
	} else {
		g = nil
	}
	rec := r.rec
	if s.Mode != WorkspaceWrite {
		rec = nil
	}
	if rec != nil {
		// Before the command starts: were ralph killed while it runs,
		// the next ralph does the check this one could not.
		r.mu.Lock()
		r.absent = s.absent
		r.mu.Unlock()
		rec.begin(g, r.nested, s.absent)
	}
	p, err := srv.start(c)
	if err != nil {
		if g != nil {
			g.end()
		}
		if rec != nil {
			rec.end()
		}
		srv.release()
		return nil, err
	}
	p.absent, p.root, p.nested, p.guarded, p.rec = s.absent, r.policy.Root, r.nested, g, rec
	return p, nil
}

// spec is the policy as the helper gets it, and its key.
func (r *Runner) spec() (spec, string, error) {
	r.mu.Lock()
	landlocked := r.guarded != nil
	r.mu.Unlock()
	s := spec{Mode: r.policy.Mode, Network: r.policy.Network, Landlocked: landlocked}
	if len(r.policy.readRules) > 0 {
		d := r.deniedRead()
		// The fallback cannot hide a path inside a directory commands
		// write without taking from them the right to make files there
		// (Keep's price), which for a rule as common as Read(./.env)
		// means no new file at the project's top: there those paths stay
		// readable to commands, as fallBack says once, and ralph's own
		// readers still refuse them.
		s.Hide = d.elsewhere
		if !landlocked {
			s.Cover = d.inWrite
		}
	}
	if s.Mode == WorkspaceWrite {
		s.Write = append([]string{r.policy.Root}, r.policy.Writable...)
		s.Write = append(s.Write, r.policy.gitWrite...)
		s.Kept = r.policy.kept
		if err := r.policy.protect(&s); err != nil {
			return s, "", err
		}
		if landlocked {
			s.Pin, s.Protect = nil, nil // no mounts without namespaces
		}
	}
	if !landlocked {
		s.Mask, s.MaskSum = r.masks()
	}
	key, err := json.Marshal(s)
	if err != nil {
		return s, "", fmt.Errorf("sandbox: %w", err)
	}
	return s, string(key), nil
}

// LandlockOnlyNote is what ralph says, once, when the kernel allows no
// user namespaces and the sandbox runs on Landlock alone.
const LandlockOnlyNote = "this system allows no user namespaces (Ubuntu's kernel.apparmor_restrict_unprivileged_userns, or a container), " +
	"so the sandbox runs on Landlock alone: writes outside the project are still refused, but .git/hooks, .git/config and .ralph/config.toml " +
	"are restored after each command instead of being read-only, and --no-network leaves commands no loopback of their own; " +
	"for the full sandbox, allow user namespaces (sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, or the AppArmor profile in docs/sandbox.md)"

// fallBack switches the runner to Landlock alone, once; it reports
// whether it did.
func (r *Runner) fallBack() bool {
	r.mu.Lock()
	if r.guarded != nil {
		r.mu.Unlock()
		return false
	}
	r.guarded = newGuardedState(r.policy.Root, r.policy.gitGuard)
	r.mu.Unlock()
	if r.policy.Notify != nil {
		note := LandlockOnlyNote
		if in := r.deniedRead().inWrite; len(in) > 0 {
			note += "; " + readRulesNote(r.policy.Root, in)
		}
		r.policy.Notify(note)
	}
	return true
}

// server returns a live helper for the spec, starting one if needed, and
// counts the caller as one of its users until Process.Wait releases it.
func (r *Runner) server(ctx context.Context, sp spec, key string) (*server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("sandbox: the runner is closed")
	}
	if s := r.cur; s != nil {
		if s.key == key && s.acquire() {
			return s, nil
		}
		// Another spec (the guarded paths changed) or a dead helper: the
		// old one goes once its last command is done.
		s.retire()
		r.cur = nil
	}
	s, err := startServer(ctx, r.policy, sp, key)
	if err != nil {
		return nil, err
	}
	s.acquire()
	r.cur = s
	return s, nil
}

// Close stops the helper; commands still running are killed with it.
// The nested guard then checks once more, as the session ends: what a
// process of the session wrote after the last step's check (a project's
// MCP server, a command killed with the helper) is taken back, and the
// person is told.
func (r *Runner) Close() {
	r.mu.Lock()
	s := r.cur
	r.cur, r.closed = nil, true
	r.mu.Unlock()
	if s != nil {
		s.stop()
	}
	if r.nested != nil && r.nested.isPrimed() {
		if us := r.nested.check(); len(us) > 0 && r.policy.Notify != nil {
			r.policy.Notify(EndNote(us))
		}
	}
	if r.rec != nil {
		r.rec.close()
	}
}

// BeginStep begins a step of the model's that may write in the project
// from ralph's own process, outside the sandbox's commands: a file tool,
// an MCP server's tool. The nested guard is primed first (the
// repositories as they are before the model's first write are the
// person's), and the guards' record says a step runs, so that a ralph
// killed before the check after it has that check done by the next
// (guardrecord.go). The returned function is the check after the step:
// what it took back. Where no nested guard runs (not workspace-write) it
// does nothing.
func (r *Runner) BeginStep() (check func() []Undone) {
	if r.nested == nil {
		return func() []Undone { return nil }
	}
	r.nested.prime()
	r.mu.Lock()
	g, absent := r.guarded, r.absent
	r.mu.Unlock()
	if r.rec != nil {
		r.rec.begin(g, r.nested, absent)
	}
	var once sync.Once
	return func() (us []Undone) {
		once.Do(func() {
			us = r.nested.check()
			if r.rec != nil {
				r.rec.end()
			}
		})
		return us
	}
}

// GitPaths is what the nested guard's last look found: the project's git
// directories and configuration files, which the file tools refuse; nil
// where no nested guard runs or before its first look.
func (r *Runner) GitPaths() *GitPaths { return r.nested.Paths() }

// Process is a command started by a Runner.
type Process struct {
	// Pid is the command's pid and process group id.
	Pid int

	srv     *server
	id      uint64
	replies chan message // started and reaped, and a nil-Op message when the helper is gone
	exited  chan struct{}
	once    sync.Once

	absent  []string
	root    string
	nested  *nestedGuard
	guarded *guardedState
	rec     *recorder
}

// deliver hands the process a message from the helper.
func (p *Process) deliver(m message) {
	if m.Op == opExited {
		p.once.Do(func() { close(p.exited) })
		return
	}
	select {
	case p.replies <- m:
	default:
	}
}

// lost tells the process that its helper is gone.
func (p *Process) lost() {
	p.once.Do(func() { close(p.exited) })
	select {
	case p.replies <- message{}:
	default:
	}
}

// await waits for the helper's answer op. A helper that has not answered
// after answerWait and is stopped (a command stopped or traced it), or
// has not answered after helperStartWait at all, is killed, which ends
// the wait; a helper that is running, only slowly, is waited for.
// Answers come within microseconds on a machine that has the time, so a
// cancelled context does not cut the wait short: an answer to a start
// must be read, or the command would run unseen.
func (p *Process) await(op string) (message, error) {
	timer := time.NewTimer(answerWait)
	defer timer.Stop()
	waited := time.Duration(0)
	for {
		select {
		case m := <-p.replies:
			if m.Op == "" {
				p.srv.mu.Lock()
				err := p.srv.dead
				p.srv.mu.Unlock()
				return m, err
			}
			if m.Op == op {
				return m, nil
			}
		case <-timer.C:
			if waited += answerWait; waited < helperStartWait && p.srv.running() {
				timer.Reset(answerWait)
				continue
			}
			p.srv.stop() // lost() follows, for every process of the helper
		}
	}
}

// Exited is closed when the command's leader has exited (or its helper is
// gone, which kills it). The leader is not reaped yet, so its process
// group id cannot be reused: killing the group is still safe.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Abandon gives up on a helper that did not report the leader's exit in
// time after the group was killed: it stops the helper, which closes
// Exited.
func (p *Process) Abandon() { p.srv.stop() }

// Wait reaps the leader, once Exited is closed and the rest of the group
// has been killed, and returns its wait status and what the sandbox has
// to add: guarded paths the command created and that were removed, or
// why the status is unknown.
func (p *Process) Wait() (syscall.WaitStatus, Outcome) {
	defer p.srv.release()
	var out Outcome
	var ws syscall.WaitStatus
	if err := p.srv.request(message{Op: opReap, ID: p.id}); err != nil {
		p.srv.mu.Lock()
		out.Err = p.srv.dead
		p.srv.mu.Unlock()
		if out.Err == nil {
			out.Err = fmt.Errorf("the sandbox helper is gone: %w", err)
		}
	} else if m, err := p.await(opReaped); err != nil {
		out.Err = err
	} else if m.Err != "" {
		out.Err = errors.New(m.Err)
	} else {
		ws = m.Status
	}
	p.srv.forget(p.id)
	for _, path := range p.absent {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if err := os.RemoveAll(path); err == nil {
			rel, _ := filepath.Rel(p.root, path)
			out.Removed = append(out.Removed, rel)
		}
	}
	if p.guarded != nil {
		out.Restored = p.guarded.end()
	}
	if p.nested != nil {
		out.Undone = p.nested.check()
	}
	if p.rec != nil {
		p.rec.end()
	}
	return ws, out
}

// protect fills in what workspace-write keeps read-only under the root,
// and remembers which guarded paths are absent so Finish can undo their
// creation: a bind mount needs an existing path to cover.
func (p *Policy) protect(s *spec) error {
	gitDir := filepath.Join(p.Root, ".git")
	for _, name := range []string{".git", ".ralph"} {
		fi, err := os.Lstat(filepath.Join(p.Root, name))
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link, which a command could replace, so the sandbox cannot keep it read-only", ErrUnavailable, name)
		}
	}
	fi, err := os.Lstat(gitDir)
	gitIsDir := err == nil && fi.IsDir()
	switch {
	case gitIsDir:
		s.Pin = append(s.Pin, gitDir)
	case err == nil:
		// A linked worktree's .git file names the repository; replacing
		// it would point git at a configuration the command wrote.
		s.Protect = append(s.Protect, gitDir)
	}
	wholeGit := false
	for _, name := range protectedNames {
		path := filepath.Join(p.Root, name)
		if name != ".ralph" && !gitIsDir {
			continue
		}
		fi, err := os.Lstat(path)
		switch {
		case err != nil:
			if name != ".ralph" {
				s.absent = append(s.absent, path)
			}
		case fi.Mode()&os.ModeSymlink != 0:
			// A link inside .git could be swapped for a directory the
			// command fills; only a read-only .git as a whole is safe.
			wholeGit = true
		default:
			s.Protect = append(s.Protect, path)
		}
	}
	if wholeGit {
		s.Protect = append([]string{gitDir}, s.Protect...)
	}
	// A linked worktree's administrative files in the main repository.
	for _, path := range p.gitGuard {
		if _, err := os.Lstat(path); err == nil {
			s.Protect = append(s.Protect, path)
		} else {
			s.absent = append(s.absent, path)
		}
	}
	// The configuration and hooks of the submodules' repositories and of
	// the other linked worktrees, which the person's git reads as it
	// reads .git/config; those a command creates are nestedGuard's.
	if gitIsDir {
		for _, pattern := range []string{"modules/*/config", "modules/*/hooks", "modules/*/modules/*/config", "modules/*/modules/*/hooks", "worktrees/*/config.worktree", "worktrees/*/commondir"} {
			matches, _ := filepath.Glob(filepath.Join(gitDir, pattern))
			for _, m := range matches {
				if fi, err := os.Lstat(m); err == nil && fi.Mode()&os.ModeSymlink == 0 {
					s.Protect = append(s.Protect, m)
				}
			}
		}
	}
	return nil
}
