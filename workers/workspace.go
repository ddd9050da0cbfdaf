package workers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/shown"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Result is what a tool call or a command returns to the model. Failures
// are results the model can read (IsError true), never Go errors.
type Result struct {
	Output  string
	IsError bool
	// Denied: the call did not happen because it needed an approval
	// nobody could give (tools.Decision.Unasked); the run's result lists
	// it.
	Denied bool
	// DeniedBy says what wanted that approval (DeniedCall: the call's own,
	// a command's or an MCP tool's), and DeniedHook names the hook that
	// wanted it, so the person is told the remedy that works: --yes
	// approves a call, never a hook.
	DeniedBy   Denier
	DeniedHook string
	// Changed is the file a file tool (write_file, edit_file) changed,
	// nil when it changed none. Outside git, where no checkpoint can
	// tell, the coordinator counts it in files_changed.
	Changed *FileChange
	// Changes are the files a tool that changes several (apply_patch)
	// changed, counted as Changed is.
	Changes []FileChange
	// Images are pictures the result shows the model (read_file of an
	// image): the model client sends them as image parts to a model that
	// accepts them, and tells any other that it cannot see them.
	Images []conversation.Image
	// BackgroundID is the id of the background command the call started
	// (run_command with background: true), "" for any other call.
	BackgroundID string
}

// Denier is what wanted the approval a Denied call did not get.
type Denier int

const (
	// DeniedCall: the call's own approval (a command, an MCP tool).
	DeniedCall Denier = iota
	// DeniedByGuard: a PreToolUse hook of the project (or a plugin's)
	// that guards the call and was not approved; a guard that does not
	// run guards nothing, so the call is refused until the hook is
	// approved (`ralph hooks approve`).
	DeniedByGuard
	// DeniedByHookAsk: a PreToolUse hook asked a person about the call,
	// and nobody could answer; --yes does not answer for them.
	DeniedByHookAsk
)

// FileChange is a file a tool changed: its path relative to the project
// root (links resolved, forward slashes), and the lines the change took
// out and put in (a whole file's, for write_file: it is no diff).
type FileChange struct {
	Path           string
	Added, Deleted int
}

// Options configures a Workspace.
type Options struct {
	Root           string        // project root (absolute path; symlinks of Root itself are resolved once at start)
	CommandTimeout time.Duration // default 120s; a per-call timeout_s argument overrides (capped at 3600s)
	MaxOutputBytes int           // per tool result, default 30000 bytes; head and tail are kept and the cut is marked
	Env            []string      // environment for commands; nil means os.Environ()
	// Sandbox confines the model's commands (see package sandbox); ""
	// means workspace-write, the safe default for a command the model
	// wrote.
	Sandbox sandbox.Mode
	// NoNetwork takes the network away from sandboxed commands.
	NoNetwork bool
	// Writable lists more directories that workspace-write commands may
	// write (the person's sandbox_writable, such as a build cache).
	Writable []string
	// UnixSockets lists named Unix sockets outside the project that
	// sandboxed commands may connect to (the person's
	// sandbox_unix_sockets); every other one outside it is refused.
	UnixSockets []string
	// Readable lists the hidden paths (sandbox.HiddenPaths) sandboxed
	// commands may read after all (the person's sandbox_readable).
	Readable []string
	// Notify tells the person something once, outside the conversation
	// (that the sandbox runs weaker on this system); nil says nothing.
	Notify func(string)
	// AddDirs are more directories the person named (--add-dir) that the
	// file tools may read and write, by absolute path, and that
	// workspace-write commands may write.
	AddDirs []string
	// Kept are absolute paths that stay hidden from the file tools under
	// any root, as they are from the sandbox's commands: the person's
	// secrets and ralph's own configuration and state directories
	// (coordinator/projectroot.Kept). They matter only when a root holds one,
	// which only the person's --allow-home-project allows.
	Kept []string
	// Door is the session's door for what reaches the model
	// (memory/kept): the file tools keep what its Read(…) deny rules name
	// as they keep Kept, and the sandbox hides it from commands.
	Door *kept.Door
	// Withheld names the variables of the person's environment that Env
	// leaves out as credentials and that shell_env could pass
	// (childenv.Withheld): the first command tells the person of them,
	// once for the Workspace and every copy of it (NoteWithheld).
	Withheld []string
	// Settings are those of Withheld that are withheld as cloud and model
	// provider settings (childenv.ProviderSetting, OPENAI_BASE_URL), not
	// as credentials: the note says so, truthfully.
	Settings []string
	// WithheldGit names the variables that configure git
	// (childenv.WithheldGit), which Env never holds and shell_env cannot
	// pass; the same note names them apart.
	WithheldGit []string
	// Seen is the person's record of the notices they were shown
	// (memory/shown): the note of the variables withheld is said once
	// per person for each set of them, not in every session. nil says it
	// once for the Workspace.
	Seen *shown.Record
	// SessionEnv is what the session adds to the model's commands'
	// environment beyond Env (memory/childenv.Session): the person's
	// settings `env` for every command, the project's and what
	// SessionStart hooks exported through CLAUDE_ENV_FILE only for those
	// that run in the sandbox. Shared by the copies; nil adds nothing.
	SessionEnv *childenv.Session
	// Editor, when set, is where the file tools read and write a
	// project file's text instead of the disk: an editor's buffers (ACP's
	// fs/read_text_file and fs/write_text_file). Every guard of the disk
	// route holds before it is asked (editorroute.go). nil is the disk.
	Editor EditorFiles
	// withheldOnce is shared by the copies, so the note is said once.
	withheldOnce *sync.Once
}

const (
	defaultCommandTimeout = 120 * time.Second
	defaultMaxOutputBytes = 30000
)

// Workspace is a project root as the tools work in it: its files opened
// beneath the root, its commands run in its sandbox, one write lock per
// file. It is safe for concurrent use.
type Workspace struct {
	root    string   // absolute, cleaned, symlinks resolved
	rootLex string   // absolute and cleaned as given, so paths spelled through a symlinked root still resolve
	kept    []string // Options.Kept at or below the root, cleaned (see Kept)
	timeout time.Duration
	maxOut  int
	env     []string
	shell   string
	// tmp is the private temporary directory of the sandbox's commands
	// (tempdir.go), "" when they use the shared one; it is made when the
	// first of them starts (makeTemp), and tmpMade says it was.
	tmp     string
	tmpOnce sync.Once
	tmpMade atomic.Bool
	tmpErr  error
	// policy confines the model's commands; its Mode is
	// danger-full-access when commands run as they are.
	policy *sandbox.Policy
	runner *sandbox.Runner // starts confined commands; nil when policy confines nothing
	// opts are the options w was made with, for copies of it.
	opts Options

	// locks serialises writes per resolved path, so concurrent edits by
	// several agents sharing this Workspace cannot interleave
	// read-modify-write.
	locksMu sync.Mutex
	locks   map[string]*sync.Mutex

	// bg are the background commands (background.go).
	bg background

	// variants are Workspaces like this one with another sandbox, for
	// the programs of programs.go; closed with it.
	variantsMu sync.Mutex
	variants   map[string]*Workspace
}

// NewWorkspace checks the root and sets up the sandbox its commands run
// in.
func NewWorkspace(opts Options) (*Workspace, error) {
	if opts.Root == "" {
		return nil, errors.New("workers: project root is empty")
	}
	lex, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("workers: project root %s: %w", opts.Root, err)
	}
	real, err := realpath.Eval(lex)
	if err != nil {
		return nil, fmt.Errorf("workers: project root %s: %w", opts.Root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workers: project root %s: %w", opts.Root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workers: project root %s is not a directory", opts.Root)
	}

	// The model writes the project, every --add-dir and every
	// sandbox_writable entry (a ~/.cargo whose bin/ is on PATH): no
	// program ralph starts for itself is found there from now on (the
	// shell below included).
	childenv.AddRoots(slices.Concat([]string{lex, real}, opts.AddDirs, opts.Writable)...)

	policy, err := sandbox.New(opts.Sandbox, real, !opts.NoNetwork, append(slices.Clone(opts.Writable), opts.AddDirs...)...)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	// A ralph killed while a command of the model's ran here did not
	// check what the command did to the git files ralph's own git obeys:
	// this one does, before anything takes them for the person's.
	if err := recoverKilled(real, opts.Notify); err != nil {
		return nil, err
	}
	policy.Notify = opts.Notify
	if opts.withheldOnce == nil {
		opts.withheldOnce = new(sync.Once)
	}
	policy.AllowUnixSockets(opts.UnixSockets...)
	policy.AllowReadable(opts.Readable...)
	// What stays the person's under the root stays hidden from commands
	// too, and under the added directories and the person's
	// sandbox_writable ones, which commands may write: sandbox_writable =
	// ["~/.config"] grants ~/.config around ralph's own configuration, so
	// a command cannot turn the next session's sandbox off.
	kept := keptUnder(opts.Kept, real, lex)
	keep := slices.Clone(kept)
	for _, d := range append(slices.Clone(opts.AddDirs), opts.Writable...) {
		keep = append(keep, keptIn(opts.Kept, d)...)
	}
	policy.Keep(keep...)
	// The person's Read(…) deny rules: the sandbox hides what they name
	// when its helper starts (globs resolved then).
	policy.DenyRead(opts.Door.Rules())
	// The temporary directories are granted around what is kept in them
	// too (a home directory under /tmp, as on CI machines), and commands
	// then get a private temporary directory of their own (tempdir.go).
	var inTemp []string
	for _, d := range sandbox.TempDirs() {
		inTemp = append(inTemp, keptIn(opts.Kept, d)...)
		inTemp = append(inTemp, homeInTemp(keptIn(sandbox.Homes(), d), policy)...)
	}
	policy.KeepFromWriting(inTemp...)
	tmp := privateTemp(policy, opts.Kept)

	w := &Workspace{
		opts:    opts,
		policy:  policy,
		runner:  sandbox.NewRunner(policy),
		root:    real,
		rootLex: lex,
		timeout: opts.CommandTimeout,
		maxOut:  opts.MaxOutputBytes,
		env:     opts.Env,
		shell:   findShell(),
		locks:   make(map[string]*sync.Mutex),
		kept:    kept,
		tmp:     tmp,
	}
	if w.timeout <= 0 {
		w.timeout = defaultCommandTimeout
	}
	if w.maxOut <= 0 {
		w.maxOut = defaultMaxOutputBytes
	}
	return w, nil
}

// findShell prefers bash because models write bash syntax, and falls back to
// sh so that minimal images still work.
// WarmShell looks up, on a goroutine of its own, the shell NewWorkspace
// looks up (findShell), so that a workspace made soon after finds it
// remembered (childenv.Program), off the way to a session's first
// request. The goroutine ends with its lookup, and nothing waits for it.
func WarmShell() {
	go findShell()
}

func findShell() string {
	for _, name := range []string{"bash", "sh"} {
		// Off the project's PATH entries: a command the person lets out
		// of the sandbox runs this shell as them.
		if p, err := childenv.Program(name); err == nil {
			return p
		}
	}
	if runtime.GOOS == "windows" {
		return "bash" // not found: the error then names what to install
	}
	return "/bin/sh"
}

// Close stops the sandbox's helper process, if one was started; commands
// still running are killed with it. The commands' private temporary
// directory, if there is one, is removed with what they left in it. The
// Workspace must not be used after.
func (w *Workspace) Close() {
	// The background commands end first, each reaped and checked by the
	// sandbox's guards as a foreground command is, before the helper
	// that holds them goes.
	w.bg.stopAll(true)
	w.runner.Close()
	w.variantsMu.Lock()
	for _, v := range w.variants {
		v.Close()
	}
	w.variants = nil
	w.variantsMu.Unlock()
	// No command may make it once the Workspace closes.
	w.tmpOnce.Do(func() {})
	if w.tmpMade.Load() {
		// Ralph's own directory, not the project's: removed through the
		// person's door, which os.RemoveAll's walk is (no link followed).
		_ = rootfs.Person().RemoveAll(w.tmp)
	}
}

// Options are the options w was made with (its root as given), for a
// Workspace like it elsewhere: the copies share the note of NoteWithheld.
func (w *Workspace) Options() Options { return w.opts }

// Root returns the project root with symlinks resolved.
func (w *Workspace) Root() string { return w.root }

// Holds reports whether the clean absolute path p is the root or below
// it, spelled with the root's links resolved or as it was given.
func (w *Workspace) Holds(p string) bool { return isInside(w.root, p) || isInside(w.rootLex, p) }

// Shell is the name of the shell the model's commands run with.
func (w *Workspace) Shell() string { return filepath.Base(w.shell) }

// Policy is the sandbox the model's commands run in.
func (w *Workspace) Policy() *sandbox.Policy { return w.policy }

// Timeout is how long a command runs when its call names no timeout.
func (w *Workspace) Timeout() time.Duration { return w.timeout }

// MaxOutput is how many bytes of output a tool's result may hold.
func (w *Workspace) MaxOutput() int { return w.maxOut }

// Lock serialises writers of tg's file within this Workspace and returns
// the unlock function. Entries are never removed: there is one small
// mutex per file ever written, which is bounded by the project's size.
func (w *Workspace) Lock(tg Target) (unlock func()) {
	key := tg.key(w.root)
	w.locksMu.Lock()
	m, ok := w.locks[key]
	if !ok {
		m = new(sync.Mutex)
		w.locks[key] = m
	}
	w.locksMu.Unlock()
	m.Lock()
	return m.Unlock
}

// keptUnder are the kept paths that lie at or below the root (spelled
// with its links resolved or as given), each spelled with the root's
// links resolved, which is how the file tools see every path.
func keptUnder(kept []string, real, lex string) []string {
	var out []string
	for _, k := range kept {
		if !filepath.IsAbs(k) {
			continue
		}
		k = filepath.Clean(k)
		if !isInside(real, k) && isInside(lex, k) {
			rel, _ := filepath.Rel(lex, k)
			k = filepath.Join(real, rel)
		}
		if isInside(real, k) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Kept reports whether the absolute path p, links resolved, is one the
// model may not reach under this root (Options.Kept), or lies in one, or
// one a Read(…) deny rule names (Options.Door).
func (w *Workspace) Kept(p string) bool {
	for _, k := range w.kept {
		if isInside(k, p) {
			return true
		}
	}
	return w.opts.Door.Denied(p) != nil
}

// keptErr is the error for a path Kept refused, shown as the model named
// it: ErrKept, with the Read(…) deny rule that names one of paths when
// one does (a *kept.DeniedError), so the refusal can name it.
func (w *Workspace) keptErr(shown string, paths ...string) error {
	if err := w.opts.Door.Denied(paths...); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrKept, shown, err)
	}
	return fmt.Errorf("%w: %s", ErrKept, shown)
}

// errResult formats an error result for the model.
func errResult(format string, a ...any) Result {
	return Result{Output: fmt.Sprintf(format, a...), IsError: true}
}

// recovered holds the roots whose killed ralphs' checks this process has
// done (sandbox.RecoverKilled): the Workspaces made after the first, for
// other sandboxes of the project, find nothing more to do.
var recovered sync.Map

func recoverKilled(root string, notify func(string)) error {
	if _, done := recovered.Load(root); done {
		return nil
	}
	if err := sandbox.RecoverKilled(root, notify); err != nil {
		return err
	}
	recovered.Store(root, true)
	return nil
}
