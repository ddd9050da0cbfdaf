package workers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// This file is the one place that decides every program ralph starts for
// itself, other than git (memory/git decides git's, and runs no program a
// file the model could write names) and the model's own commands
// (run_command, in the sandbox: command.go). For each kind of program it
// says who could have written what the program runs, and what ralph does
// about it; the constructors below are the only calls of exec.Command for
// these programs, and a guard test (programs_guard_test.go) fails when one
// is added anywhere else outside a short allow-list.
//
// The rule behind the table: a program that a file of the project names,
// or whose code the model could have written, runs in the sandbox; a
// program the person configured runs as theirs, but never with the
// project on its search paths or as its working directory, where a
// launcher (python3 -m, node, npx) would take the model's code first.
// And every program ralph starts for itself by name (git, an agent's CLI,
// bd, the shell) is the one childenv.Program found once, off the project's
// PATH entries, run by its absolute path: an activated virtualenv puts
// .venv/bin first on PATH, and the model writes it. The guard test fails
// on a bare-name exec.Command or an exec.LookPath anywhere else.

// Program is a kind of program ralph starts.
type Program string

// The kinds of program ralph starts.
const (
	ProgramUserMCP      Program = "user MCP server"
	ProgramProjectMCP   Program = "project MCP server"
	ProgramVerify       Program = "verify command of a task or plan"
	ProgramPersonVerify Program = "the person's --verify"
	ProgramNotify       Program = "notify_command"
	ProgramAgent        Program = "external agent"
	ProgramHook         Program = "hook"
	ProgramGitHook      Program = "git hook of a commit ralph makes"
	ProgramMarketClone  Program = "git clone of a plugin marketplace"
	ProgramLangServer   Program = "language server"
)

// ProgramRule is one row of the decision table.
type ProgramRule struct {
	Program Program
	// WrittenBy says who could have written what the program runs.
	WrittenBy string
	// Decision says what ralph does about it.
	Decision string
}

// ProgramRules is the decision table, in the order docs/sandbox.md lists
// it.
var ProgramRules = []ProgramRule{
	{ProgramUserMCP, "the person (their user config); but a launcher it names resolves code from its working directory and search paths",
		"started outside the project (its own cwd, else the user config directory), with PYTHONSAFEPATH=1 and the project's entries taken off PATH, NODE_PATH, PYTHONPATH and NODE_OPTIONS; the project reaches it through MCP roots"},
	{ProgramProjectMCP, "the model (.mcp.json, .ralph/config.toml and every file they name)",
		"approved by the person (command, args, env, cwd); one whose command, args or cwd touch the project then runs in the sandbox of the session's mode, with the network on and its declared env"},
	{ProgramVerify, "the model (RALPH_TASKS.md Verify: lines, a plan's Validation Commands, and the code they run)",
		"always runs in the sandbox, workspace-write whatever the session's mode (under danger-full-access it runs as the model's commands do, outside)"},
	{ProgramPersonVerify, "the person (--verify); the code it runs is the model's",
		"runs in the sandbox like any verify command, unless the person's user config sets verify_unsandboxed = true"},
	{ProgramNotify, "the person (notify_command in their user config); but a launcher it calls resolves code from its working directory and search paths",
		"runs as theirs, outside the sandbox, by /bin/sh in their home (never the project), told what happened on its stdin only, with their environment less the model's key and the project's entries off its search paths (PersonEnv)"},
	{ProgramAgent, "the person chose the agent; its settings in the project are the model's, and so is a CLI of its name on a PATH entry inside the project (node_modules/.bin)",
		"its CLI found once off the project's PATH entries (childenv.Program; one found only there is refused) and run by that path with PersonEnv's environment; started with the person's settings only: each CLI is told to leave the project's settings out, and one that cannot be told is not started in a project that holds them (workers/agents)"},
	{ProgramHook, "the person (an agent CLI's settings in their home, their user config, a plugin they added) or the model (the agent CLIs' settings files in the project); the code a hook calls may be the model's",
		"run by the shell in the project, as Claude Code runs it, in the sandbox of the session's mode with the network on (StartHook, the door of a project's MCP server), unless the person's own config lets one of theirs out (sandbox = false); with the commands' environment less credentials and the project's entries taken off PATH, NODE_PATH, PYTHONPATH and NODE_OPTIONS; a project's or plugin's hooks run only once the person approved them with every file they name (coordinator/project)"},
	{ProgramGitHook, "the person (.git/hooks, a core.hooksPath outside the work tree); the code it runs is the model's (`exec make -s lint` runs the Makefile, the pre-commit framework its config)",
		"git runs no hook; ralph runs the person's pre-commit, prepare-commit-msg, commit-msg, post-commit and post-checkout for its own commits and worktrees in the sandbox, workspace-write like a verify command (RunHook), with the index and message file copied where the sandbox may write; under danger-full-access it runs as the model's commands do, outside"},
	{ProgramMarketClone, "the person (the URL or owner/repo they gave `ralph plugin marketplace add`, or a url/github source of a marketplace they added); the repository's content is its authors'",
		"the person's git (memory/git.Clone) with their transport and credentials, in ralph's plugin store under their home, never a project; no hook runs (core.hooksPath=/dev/null), no submodule is fetched, ext:: and fd:: are refused; only the newest commit; nothing cloned runs until a plugin added from it runs as the person's plugins do"},
	{ProgramLangServer, "the person (the built-in table, their user config) or the model (a project's [lsp.NAME] table); the code it runs is the model's either way (gopls runs go list, typescript-language-server loads node_modules/typescript, rust-analyzer runs build.rs)",
		"found once off the project's PATH entries (childenv.Program) and started in the sandbox of the session's mode with the network on, in the root it serves, with PersonEnv's environment (StartSandboxed, the door of a project's MCP server); one a project's config names starts only once the person approved it as a project's MCP server is; the Landlock-only fallback refuses it (ErrLivesAcrossCommands) and the session has no diagnostics (workers/lsp)"},
}

// AgentCommand is the command of an external agent (workers/agents),
// which works on the project: it starts in dir, and what it reads of the
// project's own settings is decided by the arguments and variables each
// CLI is configured with there (and a CLI that cannot be told is not
// started beside them), not here. Its program is found once, off the
// project (childenv.Program: a planted node_modules/.bin/claude is never
// it), and its environment is PersonEnv's.
func AgentCommand(dir string, env []string, name string, args ...string) *exec.Cmd {
	path, err := childenv.Program(name)
	cmd := exec.Command(path, args...)
	if err != nil {
		cmd.Err = err
	}
	cmd.Dir = dir
	cmd.Env = PersonEnv(env, dir)
	return cmd
}

// NotifyCommand is the person's notify_command, run by the shell with
// env made safe for the project (root) by PersonEnv, and in a working
// directory outside it (OutsideDir): the command is told what happened on
// its stdin and needs no project directory, while a launcher it calls
// (python3 -c, node -e, npx) would take the model's code from one first.
func NotifyCommand(ctx context.Context, root string, env []string, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = OutsideDir(root)
	cmd.Env = PersonEnv(env, root)
	return cmd
}

// OutsideDir is the working directory of a person's program that needs
// no project directory: their home, as a terminal opens, unless it is
// unknown or lies inside a directory the model may write, then the file
// system's root, which only the administrator writes.
func OutsideDir(root string) string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) || insideRoot(home, root) || slices.ContainsFunc(childenv.Roots(), func(r string) bool { return insideRoot(home, r) }) {
		return string(filepath.Separator)
	}
	return home
}

// HookCommand is a hook's command (workers/hooks), run by the shell in
// dir (the project, where Claude Code runs it too, since hooks written
// for it name files relative to it) with env made safe for the project by
// PersonEnv: whatever the hook's own program is, a launcher it calls does
// not find the model's code first on a search path.
func HookCommand(dir string, env []string, command string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = PersonEnv(env, dir)
	return cmd
}

// UserServerCommand is the command of an MCP server from the person's own
// config: started in dir, which lies outside the project unless the
// person chose otherwise, with env made safe for root by PersonEnv. The
// program itself is looked up on that PATH, not on ralph's, whose PATH
// may hold a directory of the project (direnv adds one).
func UserServerCommand(root, dir string, env []string, name string, args ...string) *exec.Cmd {
	env = PersonEnv(env, root)
	path, err := childenv.LookPathIn(name, envValue(env, "PATH"), root)
	cmd := exec.Command(path, args...)
	if err != nil {
		cmd.Err = err
	}
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

// LanguageServerCommand is a language server's command (workers/lsp):
// its program found once off the project's PATH entries
// (childenv.Program: never a node_modules/.bin or .venv/bin of the
// project's), started in dir (the root it serves) with PersonEnv's
// environment. It always runs in the sandbox (StartSandboxed), since it
// runs the project's code whoever configured it. It is made as an
// agent's command is: the two differ only in how they are started.
func LanguageServerCommand(dir string, env []string, name string, args ...string) *exec.Cmd {
	return AgentCommand(dir, env, name, args...)
}

// ProjectServerCommand is the command of an MCP server the project
// defines; StartSandboxed starts it when ServerTouchesProject. A program
// named by a bare name is the one found off the project
// (childenv.Program); one found only in the project is looked up as
// before, and ServerTouchesProject then sends it to the sandbox.
func ProjectServerCommand(dir string, env []string, name string, args ...string) *exec.Cmd {
	path, err := childenv.Program(name)
	if errors.Is(err, childenv.ErrInProject) {
		path = name
	}
	cmd := exec.Command(path, args...)
	if err != nil && !errors.Is(err, childenv.ErrInProject) {
		cmd.Err = err
	}
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

// PersonEnv is env for a program the person configured, made safe to run
// beside the project root the model writes (and every root
// childenv.AddRoots recorded): childenv.PersonEnv, the one rule.
func PersonEnv(env []string, root string) []string {
	return childenv.PersonEnv(env, root)
}

// insideRoot reports whether path lies at or under root, as written or
// once its links are resolved (childenv.Inside).
func insideRoot(path, root string) bool {
	return childenv.Inside(path, root)
}

// envValue is the value of key in env ("" when unset).
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// ServerTouchesProject reports whether an MCP server started with
// command and args in cwd (relative to root; "" is root) runs anything
// the model may have written: it starts inside the project or in another
// directory the model's commands may write (an --add-dir, the temporary
// directory, /dev/shm), or in a directory that holds the project (python3
// -m proj.tools.server from the project's parent imports the project's
// files), or its command or an argument (or an --option=value's value)
// names a path in one of those. It errs on the side of yes.
func ServerTouchesProject(root, cwd, command string, args []string) bool {
	dir := root
	if cwd != "" {
		dir = cwd
		if !filepath.IsAbs(cwd) {
			dir = filepath.Join(root, cwd)
		}
	}
	if modelMayWrite(dir, root) || insideRoot(root, dir) {
		return true
	}
	if _, err := childenv.Program(command); errors.Is(err, childenv.ErrInProject) {
		return true // a program on PATH only in the project (.venv/bin)
	}
	for _, a := range append([]string{command}, args...) {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if a == "" {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if modelMayWrite(p, root) {
			return true
		}
	}
	return false
}

// modelMayWrite reports whether path lies in the project or anywhere
// else the model's commands may write (sandbox.ModelMayWrite).
func modelMayWrite(path, root string) bool {
	return insideRoot(path, root) || sandbox.ModelMayWrite(path)
}

// StartSandboxed starts a long-lived program a project file names (a
// project's MCP server) in the sandbox, in the session's sandbox mode but
// with the network on, as a Group whose stdin, stdout and stderr are the
// *os.File ends cmd holds. It dies with its group, with the sandbox's
// helper, and with ralph. Under danger-full-access it starts as the
// model's commands do, outside.
func (w *Workspace) StartSandboxed(ctx context.Context, cmd *exec.Cmd) (*Group, error) {
	return w.startInSandbox(ctx, cmd, true)
}

// StartLanguageServer starts a language server in the sandbox as
// StartSandboxed starts a project's MCP server, beside the commands, but
// with the session's network as the commands have it: a server runs the
// project's code (typescript-language-server loads the project's own
// node_modules/typescript, rust-analyzer its build scripts), which the
// model may have written, so it must not reach a network the model's
// commands are denied.
func (w *Workspace) StartLanguageServer(ctx context.Context, cmd *exec.Cmd) (*Group, error) {
	return w.startProgram(ctx, cmd, true)
}

// StartHook starts a hook's command (HookCommand) in the sandbox as
// StartSandboxed starts a project's MCP server, but as one of the
// commands rather than beside them: a hook lives for one event, so the
// Landlock-only fallback holds it as it holds a command, putting the
// protected paths back once it ends.
func (w *Workspace) StartHook(ctx context.Context, cmd *exec.Cmd) (*Group, error) {
	return w.startInSandbox(ctx, cmd, false)
}

// RefusedWrite implements hooks.WriteJudge: whether a program's error
// output shows that the sandbox refused one of its writes, and the path.
func (w *Workspace) RefusedWrite(output string) (string, bool) { return w.policy.RefusedWrite(output) }

// startInSandbox starts cmd in the sandbox with the network on; lives
// marks a program that runs beside the commands.
func (w *Workspace) startInSandbox(ctx context.Context, cmd *exec.Cmd, lives bool) (*Group, error) {
	ws := w
	if w.policy.Confines() && !w.policy.Network {
		var err error
		if ws, err = w.variant("network", func(o *Options) { o.NoNetwork = false }); err != nil {
			return nil, err
		}
	}
	return ws.startProgram(ctx, cmd, lives)
}

// startProgram starts cmd in w's sandbox as it is (its network too);
// lives marks a program that runs beside the commands.
func (w *Workspace) startProgram(ctx context.Context, cmd *exec.Cmd, lives bool) (*Group, error) {
	ws := w
	if !ws.policy.Confines() {
		return StartGroup(cmd)
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	files := make([]*os.File, 3)
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if s == nil {
			continue
		}
		f, ok := s.(*os.File)
		if !ok {
			return nil, errors.New("workers: a sandboxed program's stdin, stdout and stderr must be files")
		}
		files[i] = f
	}
	p, err := ws.start(ctx, sandbox.Command{Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Environ(),
		Stdin: files[0], Stdout: files[1], Stderr: files[2], LivesAcrossCommands: lives})
	if err != nil {
		return nil, err
	}
	return &Group{ld: &confinedLeader{p: p}}, nil
}

// RunVerify runs a verify command (a task's Verify: line, a plan's
// Validation Commands, the person's --verify) as run_command runs the
// model's commands, without asking: in the sandbox, workspace-write even
// when the session's commands are read-only, so that builds can write in
// the project. unsandboxed lets it out, for the person's own --verify
// when their user config says verify_unsandboxed = true; it then runs as
// their shell would. Under danger-full-access it runs as the model's
// commands do.
func (w *Workspace) RunVerify(ctx context.Context, command string, timeout time.Duration, unsandboxed bool) Result {
	if timeout <= 0 {
		timeout = w.timeout
	}
	if unsandboxed || !w.policy.Confines() {
		return w.execute(ctx, "", command, timeout, nil)
	}
	ws := w
	if w.policy.Mode != sandbox.WorkspaceWrite {
		var err error
		if ws, err = w.variant("verify", func(o *Options) { o.Sandbox = sandbox.WorkspaceWrite }); err != nil {
			return errResult("[ralph: the verify command did not run: %v]", err)
		}
	}
	r := ws.execute(ctx, "", command, timeout, ws.policy)
	// The sandbox's note tells the model how to ask for a command outside
	// it, which is no way out for a verify command: nobody calls it again.
	r.Output = strings.ReplaceAll(r.Output, sandbox.UnsandboxedHint, VerifyBlockedHint)
	return r
}

// HookDir makes a new directory for the files a git hook is handed (the
// index, the message file), in the temporary directory the sandbox's
// commands write in (memory/git.HookRunner). The caller removes it.
func (w *Workspace) HookDir() (string, error) {
	ws, err := w.hookSpace()
	if err != nil {
		return "", fmt.Errorf("%w: %w", git.ErrHookNotRun, err)
	}
	base, err := ws.tempBase()
	if err != nil {
		return "", fmt.Errorf("%w: %w", git.ErrHookNotRun, err)
	}
	return os.MkdirTemp(base, "ralph-hook-")
}

// RunHook runs one of the person's git hooks for a commit or worktree
// ralph makes (memory/git.HookRunner): the hook is the person's, but the
// code it runs is the tree's, the model's, so it runs as a verify command
// does: in the sandbox, workspace-write even when the session's commands
// are read-only, with the commands' environment and env. Under
// danger-full-access, the person's choice to run everything as
// themselves, it runs as the model's commands do, outside. Its time limit
// is ctx's.
func (w *Workspace) RunHook(ctx context.Context, path string, args, env []string, dir string) (string, error) {
	ws, err := w.hookSpace()
	if err != nil {
		return "", fmt.Errorf("%w: %w", git.ErrHookNotRun, err)
	}
	timeout := 10 * time.Minute
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	base := ws.env
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(slices.Clone(base), env...)
	var policy *sandbox.Policy
	if ws.policy.Confines() {
		policy = ws.policy
	}
	r, started := ws.executeCmd(ctx, cmd, timeout, policy)
	if !started {
		return "", fmt.Errorf("%w: %s", git.ErrHookNotRun, strings.TrimSpace(r.Output))
	}
	// The sandbox's note tells the model how to ask for a command outside
	// it, which is no way out for a hook.
	out := strings.ReplaceAll(r.Output, sandbox.UnsandboxedHint, HookBlockedHint)
	if r.IsError {
		return out, errors.New(howItEnded(out))
	}
	return out, nil
}

// howItEnded is the line of a failed command's output that says how it
// ended (commandResult's status, or ralph's kill at a timeout), which the
// sandbox's notes may follow: "the hook failed" when there is none.
func howItEnded(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		for _, p := range []string{"exit status ", "terminated by signal ", "command timed out", "command cancelled"} {
			if strings.HasPrefix(l, p) {
				return l
			}
		}
	}
	return "the hook failed"
}

// hookSpace is the Workspace a git hook runs in: w itself when its
// commands are workspace-write or not sandboxed, else a workspace-write
// copy, as for a verify command.
func (w *Workspace) hookSpace() (*Workspace, error) {
	if !w.policy.Confines() || w.policy.Mode == sandbox.WorkspaceWrite {
		return w, nil
	}
	return w.variant("verify", func(o *Options) { o.Sandbox = sandbox.WorkspaceWrite })
}

// HookBlockedHint replaces the sandbox's hint in a git hook's output:
// what the person can do about a hook the sandbox stopped.
const HookBlockedHint = "ralph runs your git hooks in the sandbox, since the code they run is the model's; the user can make a directory a hook needs writable with sandbox_writable in their user config (~/.config/ralph/config.toml), see docs/sandbox.md"

// VerifyBlockedHint replaces the sandbox's hint in a verify command's
// output: what the person can do, since no call of the model's lets a
// verify command out.
const VerifyBlockedHint = "a verify command runs in the sandbox; the user can make a directory it needs writable with sandbox_writable in their user config (~/.config/ralph/config.toml), see docs/run.md"

// variant is a Workspace like w with its options edited by edit, made once
// per name and closed with w: a sandbox of another mode, or with the
// network, for the programs above.
func (w *Workspace) variant(name string, edit func(*Options)) (*Workspace, error) {
	w.variantsMu.Lock()
	defer w.variantsMu.Unlock()
	if v, ok := w.variants[name]; ok {
		return v, nil
	}
	o := w.opts
	edit(&o)
	v, err := NewWorkspace(o)
	if err != nil {
		return nil, err
	}
	if w.variants == nil {
		w.variants = map[string]*Workspace{}
	}
	w.variants[name] = v
	return v, nil
}
