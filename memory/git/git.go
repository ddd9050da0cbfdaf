// Package git is ralph's use of the person's git: what the repository
// looks like (for the system prompt), and checkpoints of the work tree in
// a private ref namespace that undo and diff read. It runs the person's
// own git CLI, so their configuration, LFS and attributes apply, always
// with a timeout. It never touches the person's branch, index or stash:
// checkpoints are built with an index file of ralph's own
// (GIT_INDEX_FILE) and stored under refs/ralph/.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoRepo says the directory is not inside a git work tree, or git is
// not installed; callers then do without git, silently where they can.
var ErrNoRepo = errors.New("not inside a git work tree")

// Timeout bounds every git command ralph runs. A repository on a slow
// network file system may take long; ralph's work must not hang on it.
const Timeout = 10 * time.Second

// SlowTimeout bounds the git commands that run the person's hooks or
// check out a whole tree (commit, worktree add): a pre-commit hook that
// lints or tests may take minutes, as it does when the person commits.
const SlowTimeout = 10 * time.Minute

// Repo is the git work tree a project lies in.
type Repo struct {
	// Top is the work tree's top directory, symlinks resolved.
	Top string
	// GitDir is the repository directory (.git, or a linked worktree's).
	GitDir string
	// Prefix is the project's path relative to Top, "" when they are the
	// same; it ends in a slash otherwise.
	Prefix string
	// Head is HEAD's commit when the repository was opened, "" before the
	// first commit.
	Head string
}

// Open finds the work tree that dir lies in. It fails with ErrNoRepo when
// there is none or git is missing.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if !mayBeInWorkTree(dir) {
		return nil, ErrNoRepo
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoRepo
	}
	if r := discover(dir); r != nil {
		return r, nil
	}
	return revParse(ctx, dir)
}

// revParse is Open by git itself.
func revParse(ctx context.Context, dir string) (*Repo, error) {
	// One git for the four facts. Before the first commit HEAD does not
	// resolve: git prints the other three, then "HEAD", and fails.
	out, err := run(ctx, dir, nil, nil, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--show-prefix", "HEAD")
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 4 || lines[0] == "" || (err != nil && lines[3] != "HEAD") {
		return nil, ErrNoRepo
	}
	r := &Repo{Top: lines[0], GitDir: lines[1], Prefix: lines[2]}
	if err == nil {
		r.Head = lines[3]
	}
	return r, nil
}

// mayBeInWorkTree reports whether git could find a work tree from dir:
// some directory from dir up holds a .git (a directory, or a file naming
// one), or the environment names the repository. Outside git, as in a
// scratch directory or a container, that spares starting a git that can
// only fail, which took milliseconds on the way to the first request.
func mayBeInWorkTree(dir string) bool {
	if os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_WORK_TREE") != "" {
		return true
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return true
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); !errors.Is(err, os.ErrNotExist) {
			return true // there, or unknown: git decides
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// Git runs git in the work tree's top directory with the extra
// environment and returns its standard output.
func (r *Repo) Git(ctx context.Context, env []string, args ...string) ([]byte, error) {
	return run(ctx, r.Top, env, nil, args...)
}

// run runs git with a timeout. Its own configuration from the
// environment is kept (the person's), but prompts are turned off: ralph
// never waits for a password on a terminal that may not be there.
// Commands that read the person's index pass GIT_OPTIONAL_LOCKS=0, so
// that not even a stat refresh is written to it.
func run(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	return runFor(ctx, Timeout, dir, env, stdin, args...)
}

// runFor is run with another time limit.
func runFor(ctx context.Context, timeout time.Duration, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, dir, env, args)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, commandError(ctx, timeout, args, stderr.String(), err)
	}
	return out, nil
}

// command is git with args in dir, with the person's environment and
// prompts turned off.
func command(ctx context.Context, dir string, env, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// commandError describes a git command that failed: its first line of
// standard error, or that it ran out of time.
func commandError(ctx context.Context, timeout time.Duration, args []string, stderr string, err error) error {
	full := strings.TrimSpace(stderr)
	msg := full
	if ctx.Err() == context.DeadlineExceeded {
		msg = fmt.Sprintf("took longer than %s", timeout)
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return &CommandError{Command: args[0], Message: msg, Stderr: full, Err: err}
}

// proc is a git command started before its input is known, which it then
// reads from its standard input: its start-up, a few milliseconds, runs
// beside the work that produces the input instead of after it.
type proc struct {
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	args           []string
	stdin          io.WriteCloser
	stdout, stderr bytes.Buffer
}

// start starts git with args in the work tree's top directory, bounded
// by Timeout; finish gives it its input, or abort stops it.
func (r *Repo) start(ctx context.Context, env []string, args ...string) (*proc, error) {
	return start(ctx, r.Top, env, args...)
}

// start starts git with args in dir.
func start(ctx context.Context, dir string, env []string, args ...string) (*proc, error) {
	p := &proc{args: args}
	p.ctx, p.cancel = context.WithTimeout(ctx, Timeout)
	p.cmd = command(p.ctx, dir, env, args)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err == nil {
		err = p.cmd.Start()
	}
	if err != nil {
		p.cancel()
		return nil, commandError(p.ctx, Timeout, args, "", err)
	}
	return p, nil
}

// finish writes input to the command, closes its standard input and
// returns its standard output once it exits.
func (p *proc) finish(input []byte) ([]byte, error) {
	defer p.cancel()
	_, werr := p.stdin.Write(input)
	cerr := p.stdin.Close()
	if err := errors.Join(p.cmd.Wait(), werr, cerr); err != nil {
		return p.stdout.Bytes(), commandError(p.ctx, Timeout, p.args, p.stderr.String(), err)
	}
	return p.stdout.Bytes(), nil
}

// abort stops a command whose input will never come.
func (p *proc) abort() {
	p.cancel()
	_ = p.cmd.Wait()
}

// CommandError is a git command that failed: its first line of standard
// error makes the message; all of it is kept for the callers that show
// what the person's hooks said.
type CommandError struct {
	Command string // git's subcommand
	Message string
	Stderr  string
	Err     error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("git %s: %s: %s", e.Command, e.Message, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// exitCode is a failed git command's exit status, -1 when it did not
// exit on its own.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// Abs returns the absolute path of a path relative to Top.
func (r *Repo) Abs(topRel string) string { return filepath.Join(r.Top, filepath.FromSlash(topRel)) }
