package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// HelperArg is the hidden first argument that makes ralph's binary act as
// the sandbox helper.
const HelperArg = "__sandbox"

// statusWait bounds the read of the helper's status once the command has
// ended; the helper closes its end at exec or exit, so this only matters
// if something impossible happens, and then the call must not hang.
const statusWait = time.Second

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
	// Network is false for a private network namespace.
	Network bool `json:"network"`
	// StatusFD is the helper's end of the status pipe.
	StatusFD int `json:"status_fd"`
}

// Launch is one command started through the helper. Call Started right
// after cmd.Start succeeds (or Abort if it fails), and Finish once the
// command's whole process group is gone.
type Launch struct {
	policy   *Policy
	statusR  *os.File
	statusW  *os.File
	absent   []string // guarded paths that did not exist before the command
	finished bool
}

// Outcome is what the sandbox has to add to a finished command's result.
type Outcome struct {
	// Err is set when the command did not run because the sandbox could
	// not be set up (it wraps ErrUnavailable) or the shell could not be
	// started.
	Err error
	// Removed lists guarded paths (such as .git/commondir) that the
	// command created and that were removed again, relative to the root.
	Removed []string
}

// Wrap rewrites cmd, whose Path and Args are the command to run, so that
// it starts through the helper under the policy. cmd.SysProcAttr keeps
// its settings (process group, parent-death signal); namespaces are added.
func (p *Policy) Wrap(cmd *exec.Cmd) (*Launch, error) {
	s := spec{Mode: p.Mode, Network: p.Network}
	l := &Launch{policy: p}
	if p.Mode == WorkspaceWrite {
		s.Write = append([]string{p.Root}, p.Writable...)
		if err := p.protect(&s, l); err != nil {
			return nil, err
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	l.statusR, l.statusW = r, w
	s.StatusFD = 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	js, err := json.Marshal(s)
	if err != nil {
		l.Abort()
		return nil, fmt.Errorf("sandbox: %w", err)
	}

	helper := p.Helper
	if helper == "" {
		helper = "/proc/self/exe"
	}
	argv := append([]string{"ralph", HelperArg, string(js), "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = helper, argv
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := cmd.SysProcAttr
	var flags uintptr
	if len(s.Pin)+len(s.Protect) > 0 {
		flags |= syscall.CLONE_NEWNS
	}
	if !p.Network {
		flags |= syscall.CLONE_NEWNET
	}
	if flags != 0 {
		// A user namespace is what lets an unprivileged helper create the
		// others and mount in them; the command itself keeps its user id.
		attr.Cloneflags |= flags | syscall.CLONE_NEWUSER
		uid, gid := os.Geteuid(), os.Getegid()
		if uid == 0 {
			// Root maps every id, so that files owned by others stay
			// theirs (and writable by root) inside the namespace too.
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			attr.GidMappingsEnableSetgroups = true
		} else {
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		}
	}
	return l, nil
}

// protect fills in what workspace-write keeps read-only under the root,
// and remembers which guarded paths are absent so Finish can undo their
// creation: a bind mount needs an existing path to cover.
func (p *Policy) protect(s *spec, l *Launch) error {
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
				l.absent = append(l.absent, path)
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
	return nil
}

// Started closes the parent's copy of the status pipe's write end, so the
// status read ends when the helper execs or exits.
func (l *Launch) Started() {
	if l.statusW != nil {
		l.statusW.Close()
		l.statusW = nil
	}
}

// Abort releases the launch when cmd.Start failed.
func (l *Launch) Abort() {
	l.Started()
	if l.statusR != nil {
		l.statusR.Close()
		l.statusR = nil
	}
	l.finished = true
}

// Finish reads how the helper ended and removes guarded paths the command
// created. Call it only when every process of the command is gone.
func (l *Launch) Finish() Outcome {
	if l.finished {
		return Outcome{}
	}
	l.finished = true
	l.Started()
	var out Outcome
	l.statusR.SetReadDeadline(time.Now().Add(statusWait))
	status, _ := io.ReadAll(l.statusR)
	l.statusR.Close()
	switch {
	case len(status) == 0:
		out.Err = fmt.Errorf("%w: its helper did not start (the program %s does not handle %s)", ErrUnavailable, l.helperName(), HelperArg)
	case status[0] == 'E':
		out.Err = fmt.Errorf("%w: %s", ErrUnavailable, status[1:])
	case len(status) > 1:
		out.Err = errors.New(string(status[1:]))
	}
	for _, path := range l.absent {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if err := os.RemoveAll(path); err == nil {
			rel, _ := filepath.Rel(l.policy.Root, path)
			out.Removed = append(out.Removed, rel)
		}
	}
	return out
}

func (l *Launch) helperName() string {
	if l.policy.Helper != "" {
		return l.policy.Helper
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "ralph"
}
