// Package sandbox confines the shell commands the model runs. The model is
// untrusted (a prompt injection can steer it), so its commands may read
// anywhere but write only where the policy says, and may lose the network.
//
// The structure follows codex's Linux sandbox: ralph re-executes its own
// binary as a helper (`ralph __sandbox <policy>`) in fresh namespaces; the
// helper makes the protected paths read-only with bind mounts and applies
// Landlock to itself, and only then starts the model's commands, which
// inherit all of it, so nothing of a command ever runs unconfined. Unlike
// codex, the helper lives for the session and starts every command (a
// Runner), because starting ralph's binary again cost more than most
// commands do.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/realpath"
)

// Mode is how much a sandboxed command may change. The names are codex's.
type Mode string

const (
	// ReadOnly allows no writes at all (except to devices such as /dev/null).
	ReadOnly Mode = "read-only"
	// WorkspaceWrite allows writes under the project root and the temporary
	// directory, except to .git/hooks, .git/config and .ralph/.
	WorkspaceWrite Mode = "workspace-write"
	// FullAccess runs commands as they are: no sandbox.
	FullAccess Mode = "danger-full-access"
)

// Modes lists the modes, strictest first.
var Modes = []Mode{ReadOnly, WorkspaceWrite, FullAccess}

// ParseMode checks a mode name; "" is the default, workspace-write.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return WorkspaceWrite, nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown sandbox mode %q; use read-only, workspace-write or danger-full-access", s)
}

// looser reports whether a allows more than b.
func looser(a, b Mode) bool { return rank(a) > rank(b) }

func rank(m Mode) int {
	for i, x := range Modes {
		if x == m {
			return i
		}
	}
	return len(Modes) // unknown modes count as the loosest, so they are never let through as "stricter"
}

// Policy is what a sandboxed command may do.
type Policy struct {
	Mode Mode
	// Root is the project root: absolute, symlinks resolved.
	Root string
	// Writable lists the directories besides the root where commands may
	// write (workspace-write only): the temporary directory, and those the
	// person added (sandbox_writable).
	Writable []string
	// Network is false under --no-network.
	Network bool
	// UnixSockets lists the named Unix sockets outside the project that
	// commands may connect to (the person's sandbox_unix_sockets), each
	// as given and with symbolic links resolved (AllowUnixSockets).
	UnixSockets []string
	// HiddenPaths are the well-known secret files and directories commands
	// may not read (hidden.go): those of the person's home and ralph's
	// own configuration, less what AllowReadable allowed.
	HiddenPaths []string
	// kept are the paths in the directories commands may write that
	// they may not write there (writes are granted around them): those
	// of Keep, which are in HiddenPaths too, and of KeepFromWriting.
	kept []string
	// hiddenLinks maps the target of a link inside a secret directory
	// to the secret path it was found in (hiddenPaths).
	hiddenLinks map[string]string
	// readRules are the person's Read(…) deny rules, whose paths are
	// hidden from commands when the helper starts (hiddenrules.go).
	readRules kept.Rules
	// refusals are the socket connects the sandbox refused that no note
	// has told the model of yet (see Explain).
	refusals *socketRefusals
	// extra is true when the person added writable directories, which the
	// description for the model then mentions.
	extra bool
	// gitWrite lists, when the root is a linked worktree, the directories
	// of the main repository its git writes (see worktree.go), and
	// gitGuard the files in them that stay read-only.
	gitWrite, gitGuard []string
	// Notify, when set, tells the person something about the sandbox
	// once (that it runs weaker than it should on this system).
	Notify func(string)
	// Helper is the executable that runs HelperMain when started with
	// HelperArg; "" means this process's own binary (/proc/self/exe), so
	// a ralph binary replaced on disk while it runs still finds itself.
	Helper string
	// private is this policy's own private temporary directory
	// (SetPrivateTemp), "" when it has none; tempDirs are the temporary
	// directories it grants, links resolved, where other sessions'
	// private directories lie.
	private  string
	tempDirs []string
}

// PrivateTempPrefix begins the name of every session's private temporary
// directory (workers' privateTemp), made in the temporary directory
// beside the other sessions' own. A sandbox grants its commands their
// own session's, named in the policy (SetPrivateTemp), and no other: on
// Linux the walk that grants a temporary directory around the kept
// paths in it passes over every entry so named, and on macOS the
// Seatbelt profile leaves every such name in the temporary directories
// out of what commands may write. Another session's commands would
// otherwise write into this one's (its git hooks' index copy and
// message, its build caches).
const PrivateTempPrefix = "ralph-tmp-"

// SetPrivateTemp grants dir, the session's private temporary directory
// (an absolute path, links resolved, named PrivateTempPrefix and
// something nobody can foresee), to commands whole: the one entry so
// named in the temporary directories that they may write.
func (p *Policy) SetPrivateTemp(dir string) {
	p.private = dir
	p.Writable = append(p.Writable, dir)
}

// PrivateTemp is the directory SetPrivateTemp granted, "" when none.
func (p *Policy) PrivateTemp() string { return p.private }

// ErrUnavailable wraps every reason the sandbox cannot confine a command
// on this machine; the command is then not run.
var ErrUnavailable = errors.New("the sandbox is not available")

// ErrLivesAcrossCommands says the Landlock-only sandbox cannot hold a
// program that lives across the model's commands: there .git/hooks,
// .git/config and .ralph/ are put back after each command instead of
// being read-only, and such a program could change them between the put
// back and ralph's own git.
var ErrLivesAcrossCommands = errors.New("the Landlock-only sandbox cannot hold a program that runs beside the commands (a project's MCP server): it puts .git/hooks, .git/config and .ralph/ back only after each command; allow user namespaces for the full sandbox (docs/sandbox.md)")

// New returns the policy for a mode ("" is workspace-write), a project
// root and the network setting. Under workspace-write commands may also
// write the temporary directory (os.TempDir, and /dev/shm, which programs
// use as temporary memory) and the extra directories given; those that do
// not exist are left out.
func New(mode Mode, root string, network bool, extra ...string) (*Policy, error) {
	mode, err := ParseMode(string(mode))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	real, err := realpath.Eval(root)
	if err != nil {
		return nil, fmt.Errorf("sandbox: project root: %w", err)
	}
	p := &Policy{Mode: mode, Root: real, Network: network}
	if mode != FullAccess {
		// The project's own files are never hidden, nor a secret
		// directory the project lies in.
		p.HiddenPaths, p.hiddenLinks = defaultHidden()
		p.AllowReadable(real)
	}
	if mode == WorkspaceWrite {
		for i, d := range append(TempDirs(), extra...) {
			if r, err := realpath.Eval(d); err == nil && filepath.IsAbs(r) {
				p.Writable = append(p.Writable, r)
				if i < len(TempDirs()) {
					p.tempDirs = append(p.tempDirs, r)
				}
			}
		}
		p.extra = len(extra) > 0
		p.gitWrite, p.gitGuard = worktreeDirs(real)
	}
	return p, nil
}

// TempDirs are the temporary directories besides the project that every
// workspace-write sandbox lets commands write, as given: first the one
// programs make their temporary files in (os.TempDir: $TMPDIR, else
// /tmp), then /dev/shm, which programs use as temporary memory. A kept
// path that lies in one (a home directory under /tmp, as on CI machines)
// is granted around, not over (workers.NewWorkspace).
func TempDirs() []string { return []string{os.TempDir(), "/dev/shm"} }

// WritableByCommands reports whether dir lies in a directory that the
// model's commands may write in every project (the temporary directory,
// /dev/shm): a file there is the model's as much as the project's are.
func WritableByCommands(dir string) bool {
	real, err := realpath.Eval(dir)
	if err != nil {
		real = dir
	}
	for _, d := range TempDirs() {
		if r, err := realpath.Eval(d); err == nil {
			if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

// ModelMayWrite reports whether path lies where the model's commands may
// write in any project: the temporary directory and /dev/shm
// (WritableByCommands), or a root childenv records (/var/tmp, and once a
// session starts its project, each --add-dir and sandbox_writable entry).
// A file there may be the model's, and so may a link on the way to it.
func ModelMayWrite(path string) bool {
	if WritableByCommands(path) {
		return true
	}
	for _, r := range childenv.Roots() {
		if childenv.Inside(path, r) {
			return true
		}
	}
	return false
}

// Confines reports whether commands run under this policy are sandboxed
// at all.
func (p *Policy) Confines() bool { return p != nil && p.Mode != FullAccess }

// Describe says in one phrase what the sandbox forbids, for the model.
func (p *Policy) Describe() string {
	var s string
	switch p.Mode {
	case ReadOnly:
		s = "no writes are allowed"
	case WorkspaceWrite:
		s = "writes outside the project and the temporary directory, and to .git/hooks, .git/config and .ralph/, are not allowed"
		if p.extra {
			s = "writes outside the project, the temporary directory and the directories the user made writable, and to .git/hooks, .git/config and .ralph/, are not allowed"
		}
	default:
		s = "nothing is restricted"
	}
	if p.Confines() && !p.Network {
		s += "; there is no network"
	}
	return s
}

// protectedNames are the paths under the root that stay read-only in
// workspace-write: git runs hooks and reads config (core.fsmonitor,
// core.hooksPath, ...) as the person, outside any sandbox, and .ralph/
// holds ralph's own state and configuration (allowed commands).
// commondir and config.worktree redirect or extend git's configuration
// the same way config does, so they are guarded too.
var protectedNames = []string{".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree", ".ralph"}

// writable reports whether the policy lets a command write at path (an
// absolute, cleaned path with symlinks resolved as far as it exists).
func (p *Policy) writable(path string) bool {
	switch p.Mode {
	case FullAccess:
		return true
	case ReadOnly:
		return false
	}
	for _, name := range protectedNames {
		if within(filepath.Join(p.Root, name), path) {
			return false
		}
	}
	if path == filepath.Join(p.Root, ".git") {
		return false // pinned: it may be written in, not renamed or removed
	}
	if within(p.Root, path) {
		return true
	}
	for _, g := range p.gitGuard {
		if within(g, path) {
			return false
		}
	}
	for _, d := range p.gitWrite {
		if within(d, path) {
			return true
		}
	}
	if p.othersPrivate(path) {
		return false
	}
	for _, d := range p.Writable {
		if within(d, path) {
			return true
		}
	}
	return false
}

// othersPrivate reports whether path is, or lies in, another session's
// private temporary directory: an entry of a temporary directory named
// PrivateTempPrefix… that is not this policy's own.
func (p *Policy) othersPrivate(path string) bool {
	if within(p.private, path) && p.private != "" {
		return false
	}
	for _, t := range p.tempDirs {
		rest, ok := strings.CutPrefix(path, strings.TrimSuffix(t, "/")+"/")
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(rest, "/")
		if strings.HasPrefix(first, PrivateTempPrefix) {
			return true
		}
	}
	return false
}

// within reports whether path is dir or lies beneath it.
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
