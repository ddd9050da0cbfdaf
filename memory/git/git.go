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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// ErrNoRepo says the directory is not inside a git work tree, or git is
// not installed; callers then do without git, silently where they can.
var ErrNoRepo = errors.New("not inside a git work tree")

// Timeout bounds every git command ralph runs. A repository on a slow
// network file system may take long; ralph's work must not hang on it.
const Timeout = 10 * time.Second

// SlowTimeout bounds the person's hooks that ralph runs (hooks.go) and
// the git commands that check out a whole tree (worktree add): a
// pre-commit hook that lints or tests may take minutes, as it does when
// the person commits.
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
	// Hooks runs the person's hooks for the commits and worktrees ralph
	// makes, in the sandbox (hooks.go); nil refuses a commit that has a
	// hook to run.
	Hooks HookRunner

	// indexSum and indexSeen are the person's index's last checksum and
	// the tree it held then (see indexTree).
	indexMu   sync.Mutex
	indexSum  string
	indexSeen string

	// afterStep, set only by tests, is told each git step of a merge or
	// a commit once it is done (intent.go); a test stops the change there
	// as a kill would. A pointer, so that a Repo stays comparable.
	afterStep *func(step string)
}

// Open finds the work tree that dir lies in. It fails with ErrNoRepo when
// there is none or git is missing.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if !mayBeInWorkTree(dir) {
		return nil, ErrNoRepo
	}
	if _, err := childenv.Program("git"); err != nil {
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

// GitSized is Git for a command whose work grows with the work tree (a
// checkpoint's listing, add and tree of every changed file; a restore):
// it has SlowTimeout, not Timeout, since 10,000 changed files on a busy
// machine took longer than Timeout, and a checkpoint cut short is a
// change undo cannot take back.
func (r *Repo) GitSized(ctx context.Context, env []string, args ...string) ([]byte, error) {
	return runCmd(ctx, SlowTimeout, false, r.Top, env, nil, args...)
}

// run runs git with a timeout. Its own configuration from the
// environment is kept (the person's), but prompts are turned off: ralph
// never waits for a password on a terminal that may not be there.
// Commands that read the person's index pass GIT_OPTIONAL_LOCKS=0, so
// that not even a stat refresh is written to it.
func run(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	return runCmd(ctx, Timeout, false, dir, env, stdin, args...)
}

// runCmd runs git with a time limit; hooks keeps the person's
// core.hooksPath, only for asking git where their hooks lie
// (hooksOutsideWorkTree): no git ralph runs starts a hook.
func runCmd(ctx context.Context, timeout time.Duration, hooks bool, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(ctx, dir, env, hooks, args)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := outputWatched(cmd)
	if err != nil {
		return out, commandError(ctx, timeout, args, stderr.String(), err)
	}
	return out, nil
}

// safeConfig is given on the command line of every git ralph runs. The
// model writes files, and git reads some of them as configuration that
// names programs to run: a nested repository's .git/config, a
// submodule's .git/modules/<name>/config, a linked worktree's
// config.worktree. ralph's git runs outside the sandbox with the
// person's rights, so none of those programs may run: settings given
// with -c win over every configuration file, and git hands them on to
// the gits it starts inside submodules (GIT_CONFIG_PARAMETERS), so they
// hold there too.
//   - core.fsmonitor runs a program on every index refresh (status,
//     diff, add): the attack of a nested repository.
//   - core.hooksPath=/dev/null turns hooks off: ralph runs the person's
//     own itself, in the sandbox (hooks.go).
//   - submodule.recurse and status.submoduleSummary would start gits in
//     submodules, which read the submodules' own configuration; every
//     command that looks at the work tree also passes
//     --ignore-submodules, which .gitmodules cannot override.
//   - protocol.allow=never: ralph's git never talks to a remote, so no
//     transport (core.sshCommand, ext::, a credential helper) can run.
//   - protocol.ext.allow=never and protocol.fd.allow=never: a policy for
//     one protocol wins over protocol.allow, so a configuration file's
//     protocol.ext.allow=always would let ext:: run its program (a
//     remote's url "ext::sh -c …", or an url.<base>.insteadOf that
//     rewrites https:// to one). These two stay for the gits that talk
//     to a remote (RemoteCommand) too; GIT_ALLOW_PROTOCOL, which would
//     override every policy, loses ext and fd in bare.
//   - pager and editors: ralph reads git's output itself and never edits.
//
// Filter drivers, textconv, diff and merge drivers and the other keys
// that run a program are named by configuration too: the person's run
// (LFS must work), the model's are neutralised by the guard build adds
// (trust.go), and a nested repository's is never read, since nothing
// recurses into it.
var safeConfig = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.pager=cat",
	"core.editor=:",
	"sequence.editor=:",
	"core.askPass=",
	"credential.helper=",
	"protocol.allow=never",
	"protocol.ext.allow=never",
	"protocol.fd.allow=never",
	"submodule.recurse=false",
	"status.submoduleSummary=false",
	"diff.ignoreSubmodules=dirty",
}

// remoteConfig are the settings of safeConfig that a git talking to a
// remote must go without: its transport and the person's credentials.
var remoteConfig = []string{"protocol.allow=never", "credential.helper=", "core.askPass="}

// command is git with args in dir, with the person's environment less
// anything that looks like a credential (git needs none of ralph's, and
// the model's key must reach no process ralph starts), prompts turned
// off, and safeConfig before args. hooks keeps the person's hooks path
// (see runCmd).
func command(ctx context.Context, dir string, env []string, hooks bool, args []string) *exec.Cmd {
	return build(ctx, dir, env, hooks, false, args)
}

// RemoteCommand is the git command ralph-temporal's workers run in their
// own clones: safeConfig, except that it may fetch and push with the
// person's transport and credentials, and it never runs hooks. It is the
// one other way to build a git command; every git ralph runs comes from
// this file.
func RemoteCommand(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	return build(ctx, dir, env, false, true, args)
}

// build is the one place a git command ralph runs is made: safeConfig,
// then the guard of the directory (trust.go): every program-running key
// from a file the model may write neutralised, porcelain diffs without
// external diff or textconv when one such is configured, and the
// repository pinned to the one the session opened.
func build(ctx context.Context, dir string, env []string, hooks, remote bool, args []string) *exec.Cmd {
	return buildWith(ctx, guardFor(ctx, dir), dir, env, hooks, remote, args)
}

// buildWith is build with the guard decided: the other callers are the
// first look at the work tree (quickGuard), whose guard needs no listing,
// and git config (configCommand), which runs no program.
func buildWith(ctx context.Context, g *guard, dir string, env []string, hooks, remote bool, args []string) *exec.Cmd {
	if g.noHooks {
		hooks = false
	}
	if g.noDiffDrivers {
		// The subcommand follows the caller's own -c settings.
		i := 0
		for i+1 < len(args) && args[i] == "-c" {
			i += 2
		}
		if i < len(args) && slices.Contains([]string{"diff", "log", "show"}, args[i]) {
			args = slices.Concat(args[:i+1], []string{"--no-ext-diff", "--no-textconv"}, args[i+1:])
		}
	}
	pin := g.env
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_WORK_TREE=") {
			pin = nil // the caller names the repository itself
		}
	}
	return bare(ctx, dir, slices.Concat(pin, env), hooks, remote, g.config, args)
}

// hooksOutsideWorkTree is the directory of the hooks that git would run
// in dir when it lies where the model cannot write: .git/hooks, which
// the sandbox keeps read-only, or a core.hooksPath outside the work
// tree, of a repository the model did not make. A hooksPath inside the
// work tree (a tracked .husky/) holds files the model may have written,
// so such hooks are skipped: "".
func hooksOutsideWorkTree(ctx context.Context, dir string) string {
	// --git-path answers relative to dir (--path-format=absolute needs
	// git 2.31); the other two are absolute. hooks is true so that git
	// answers with the person's hooks path, not safeConfig's /dev/null.
	out, err := runCmd(ctx, Timeout, true, dir, nil, nil, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-path", "hooks", "--git-common-dir")
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || len(lines) != 4 {
		return ""
	}
	top, gitDir, hooks, common := lines[0], lines[1], lines[2], lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	// A repository the model made has the model's hooks, wherever they
	// lie (modelrepo.go).
	if modelHooks(ctx, dir, common) {
		return ""
	}
	if !filepath.IsAbs(hooks) {
		hooks = filepath.Join(dir, hooks)
	}
	// Symbolic links are resolved as git resolved top and the git dir.
	if real, err := filepath.EvalSymlinks(hooks); err == nil {
		hooks = real
	}
	if within(gitDir, hooks) || !within(top, hooks) {
		return hooks
	}
	return ""
}

// within reports whether path is dir or lies beneath it.
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// commandError describes a git command that failed: its first line of
// standard error, or that it ran out of time.
func commandError(ctx context.Context, timeout time.Duration, args []string, stderr string, err error) error {
	// A git ended on a planted FIFO says so in one sentence, which names
	// the file: git's own error (a signal) says nothing of the cause.
	var special *SpecialFileError
	if errors.As(err, &special) {
		return special
	}
	full := strings.TrimSpace(stderr)
	msg := full
	switch {
	case errors.Is(err, errStopped):
		msg = errStopped.Error()
	case ctx.Err() == context.DeadlineExceeded:
		msg = fmt.Sprintf("took longer than %s", timeout)
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return &CommandError{Command: subcommand(args), Message: msg, Stderr: full, Err: err}
}

// subcommand is the git command args run, past the options before it
// ("-c key=value", "--no-pager"): an error that named "git -c" said
// nothing of what failed.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

// proc is a git command started before its input is known, which it then
// reads from its standard input: its start-up, a few milliseconds, runs
// beside the work that produces the input instead of after it.
type proc struct {
	cmd            *exec.Cmd
	w              *watch
	ctx            context.Context
	cancel         context.CancelFunc
	args           []string
	limit          time.Duration
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
	return startWithin(ctx, Timeout, dir, env, args...)
}

// startWithin starts git with args in dir, bounded by limit.
func startWithin(ctx context.Context, limit time.Duration, dir string, env []string, args ...string) (*proc, error) {
	return startGuarded(ctx, limit, nil, dir, env, args...)
}

// startGuarded is startWithin with the guard g already decided; nil is
// the directory's own (guardFor).
func startGuarded(ctx context.Context, limit time.Duration, g *guard, dir string, env []string, args ...string) (*proc, error) {
	p := &proc{args: args, limit: limit}
	p.ctx, p.cancel = context.WithTimeout(ctx, limit)
	if g == nil {
		g = guardFor(p.ctx, dir)
	}
	p.cmd = buildWith(p.ctx, g, dir, env, false, false, args)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err == nil {
		p.w, err = startWatched(p.cmd)
	}
	if err != nil {
		p.cancel()
		return nil, commandError(p.ctx, limit, args, "", err)
	}
	return p, nil
}

// finish writes input to the command, closes its standard input and
// returns its standard output once it exits.
func (p *proc) finish(input []byte) ([]byte, error) {
	defer p.cancel()
	_, werr := p.stdin.Write(input)
	cerr := p.stdin.Close()
	if err := errors.Join(p.w.finish(), werr, cerr); err != nil {
		return p.stdout.Bytes(), commandError(p.ctx, p.limit, p.args, p.stderr.String(), err)
	}
	return p.stdout.Bytes(), nil
}

// abort stops a command whose input will never come.
func (p *proc) abort() {
	p.cancel()
	_ = p.w.finish()
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
	// A git ralph ended has no message of its own but the cause, which
	// would otherwise be said twice.
	if e.Err != nil && e.Message != e.Err.Error() {
		return fmt.Sprintf("git %s: %s: %s", e.Command, e.Message, e.Err)
	}
	return fmt.Sprintf("git %s: %s", e.Command, e.Message)
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
