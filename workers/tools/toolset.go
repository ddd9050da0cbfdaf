// Package workers implements the tools the model calls: reading, writing and
// editing files, listing and searching the project, and running shell
// commands. Every tool is confined to the project root, and every failure is
// returned as a Result the model can read instead of a Go error, so that a
// bad tool call becomes feedback for the model rather than a crash.
package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/workers/sandbox"
)

// Result is what a tool call returns to the model. Failures are results the
// model can read (IsError true), never Go errors.
type Result struct {
	Output  string
	IsError bool
	// Denied: the call did not happen because it needed an approval
	// nobody could give (Decision.Unasked); the run's result lists it.
	Denied bool
	// Changed is the file a file tool (write_file, edit_file) changed,
	// nil when it changed none. Outside git, where no checkpoint can
	// tell, the coordinator counts it in files_changed.
	Changed *FileChange
}

// FileChange is a file a tool changed: its path relative to the project
// root (links resolved, forward slashes), and the lines the change took
// out and put in (a whole file's, for write_file: it is no diff).
type FileChange struct {
	Path           string
	Added, Deleted int
}

// lineCount is how many lines s has, a last line without its newline
// included.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// Tool is one callable tool; the coordinator registers extra tools later.
type Tool interface {
	Def() ToolDef
	Run(ctx context.Context, args json.RawMessage) Result
}

// Options configures a Toolset.
type Options struct {
	Root           string        // project root (absolute path; symlinks of Root itself are resolved once at start)
	Approver       Approver      // nil refuses every command
	CommandTimeout time.Duration // default 120s; a per-call timeout_s argument overrides (capped at 3600s)
	MaxOutputBytes int           // per tool result, default 30000 bytes; head and tail are kept and the cut is marked
	Env            []string      // environment for commands; nil means os.Environ()
	// Sandbox confines run_command (see package sandbox); "" means
	// workspace-write, the safe default for a command the model wrote.
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
	// Readable lists the well-known secret paths sandboxed commands may
	// read after all (the person's sandbox_readable).
	Readable []string
	// Notify tells the person something once, outside the conversation
	// (that the sandbox runs weaker on this system); nil says nothing.
	Notify func(string)
	// AddDirs are more directories the person named (--add-dir) that the
	// file tools may read and write, by absolute path, and that
	// workspace-write commands may write.
	AddDirs []string
	// AutoApprove says approvals are automatic (--yes): nobody would see a
	// request to leave the sandbox, so such requests are refused.
	AutoApprove bool
	// Withheld names the variables of the person's environment that Env
	// leaves out as credentials and that shell_env could pass
	// (childenv.Withheld): the first command tells the person of them,
	// once for the Toolset and every Rooted copy of it.
	Withheld []string
	// withheldOnce is shared by the copies, so the note is said once.
	withheldOnce *sync.Once
}

const (
	defaultCommandTimeout = 120 * time.Second
	maxCommandTimeout     = 3600 * time.Second
	defaultMaxOutputBytes = 30000

	// resultSlack is how far past MaxOutputBytes a result may grow before
	// Call cuts it. Built-in tools budget their payload to MaxOutputBytes and
	// add short headers and notes on top; the slack keeps those intact while
	// still bounding results of registered tools that do not budget at all.
	resultSlack = 1024
)

// Toolset holds the built-in tools plus any registered ones and dispatches
// calls by name. It is safe for concurrent use.
type Toolset struct {
	root     string // absolute, cleaned, symlinks resolved
	rootLex  string // absolute and cleaned as given, so paths spelled through a symlinked root still resolve
	approver Approver
	timeout  time.Duration
	maxOut   int
	env      []string
	shell    string
	// policy confines run_command; its Mode is danger-full-access when
	// commands run as they are.
	policy      *sandbox.Policy
	runner      *sandbox.Runner // starts confined commands; nil when policy confines nothing
	autoApprove bool
	// opts are the options t was made with, for Rooted.
	opts Options

	mu      sync.RWMutex
	tools   map[string]Tool
	order   []string
	sources []Source

	// locks serialises writes per resolved path, so concurrent edits by
	// several agents sharing this Toolset cannot interleave read-modify-write.
	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
	// added are the directories of --add-dir (adddirs.go).
	added []addedDir

	// variants are Toolsets like this one with another sandbox, for
	// the programs of programs.go; closed with it.
	variantsMu sync.Mutex
	variants   map[string]*Toolset
}

// NewToolset checks the root and returns a Toolset with the built-in tools
// registered.
func NewToolset(opts Options) (*Toolset, error) {
	if opts.Root == "" {
		return nil, errors.New("workers: project root is empty")
	}
	lex, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("workers: project root %s: %w", opts.Root, err)
	}
	real, err := filepath.EvalSymlinks(lex)
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

	policy, err := sandbox.New(opts.Sandbox, real, !opts.NoNetwork, append(slices.Clone(opts.Writable), opts.AddDirs...)...)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	policy.Notify = opts.Notify
	if opts.withheldOnce == nil {
		opts.withheldOnce = new(sync.Once)
	}
	policy.AllowUnixSockets(opts.UnixSockets...)
	policy.AllowReadable(opts.Readable...)

	t := &Toolset{
		opts:        opts,
		policy:      policy,
		runner:      sandbox.NewRunner(policy),
		autoApprove: opts.AutoApprove,
		root:        real,
		rootLex:     lex,
		approver:    opts.Approver,
		timeout:     opts.CommandTimeout,
		maxOut:      opts.MaxOutputBytes,
		env:         opts.Env,
		shell:       findShell(),
		tools:       make(map[string]Tool),
		locks:       make(map[string]*sync.Mutex),
	}
	if t.approver == nil {
		t.approver = refuseAll{}
	}
	if t.timeout <= 0 {
		t.timeout = defaultCommandTimeout
	}
	if t.maxOut <= 0 {
		t.maxOut = defaultMaxOutputBytes
	}
	for _, b := range Build(Deps{Files: t}) {
		t.Register(b)
	}
	if t.added, err = newAddedDirs(opts); err != nil {
		return nil, err
	}
	return t, nil
}

// findShell prefers bash because models write bash syntax, and falls back to
// sh so that minimal images still work.
func findShell() string {
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if runtime.GOOS == "windows" {
		return "bash" // not found: the error then names what to install
	}
	return "/bin/sh"
}

// Add registers the tools of the list whose dependencies d holds (Build):
// the project's own (remember, complete_task, record_decision, ask_user)
// and a plan's write_plan.
func (t *Toolset) Add(d Deps) {
	d.Files = nil // the file tools are t's own, made with it
	for _, tool := range Build(d) {
		t.Register(tool)
	}
}

// Mode is what t's session allows: its sandbox mode and the network.
func (t *Toolset) Mode() Mode {
	return Mode{Sandbox: t.policy.Mode, Network: !t.opts.NoNetwork}
}

// Close stops the sandbox's helper process, if one was started; commands
// still running are killed with it. The Toolset must not be used after.
func (t *Toolset) Close() {
	t.runner.Close()
	t.variantsMu.Lock()
	for _, v := range t.variants {
		v.Close()
	}
	t.variants = nil
	t.variantsMu.Unlock()
	for _, d := range t.added {
		d.tools.Close()
	}
}

// Rooted returns a Toolset like t — the same approver, environment,
// timeouts, output limit and sandbox mode — whose file tools and commands
// are rooted in dir and confined to it as t's are to its root: a task's
// own git worktree. The tools registered on t besides the built-ins
// (remember, which writes the project's AGENT.md) are carried over as
// they are. It has its own write locks and sandbox helper: Close it.
func (t *Toolset) Rooted(dir string) (*Toolset, error) {
	o := t.opts
	o.Root = dir
	r, err := NewToolset(o)
	if err != nil {
		return nil, err
	}
	builtin := map[string]bool{}
	for _, name := range r.order {
		builtin[name] = true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, name := range t.order {
		if !builtin[name] {
			r.Register(t.tools[name])
		}
	}
	for _, s := range t.sources {
		r.AddSource(s)
	}
	return r, nil
}

// Source is a set of tools from outside ralph that are known only once
// something has started, such as an MCP server's. Every agent working
// through this Toolset (or a View or Rooted copy of it) shares its
// sources, and so their connections.
type Source interface {
	// Prepare makes the tools ready: it starts what must start, the
	// first time; later calls return at once. It returns early when ctx
	// ends.
	Prepare(ctx context.Context)
	// Tools are the tools available now.
	Tools() []Tool
	// Unprepared reports whether Prepare has work to do.
	Unprepared() bool
}

// AddSource adds a source of tools. Its tools follow the registered ones
// and never replace one of them.
func (t *Toolset) AddSource(s Source) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sources = append(t.sources, s)
}

// Prepare prepares every source (see Source); the coordinator calls it
// before it tells the model which tools there are.
func (t *Toolset) Prepare(ctx context.Context) {
	t.mu.RLock()
	sources := slices.Clone(t.sources)
	t.mu.RUnlock()
	for _, s := range sources {
		s.Prepare(ctx)
	}
}

// Unprepared reports whether a source has yet to be prepared.
func (t *Toolset) Unprepared() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, s := range t.sources {
		if s.Unprepared() {
			return true
		}
	}
	return false
}

// sourceTools are the sources' tools whose names no registered tool
// has; callers hold mu.
func (t *Toolset) sourceTools() []Tool {
	var out []Tool
	for _, s := range t.sources {
		for _, tool := range s.Tools() {
			if _, ok := t.tools[tool.Def().Name]; !ok {
				out = append(out, tool)
			}
		}
	}
	return out
}

// Root returns the project root with symlinks resolved.
func (t *Toolset) Root() string { return t.root }

// Register adds a tool, or replaces the tool of the same name in place so
// that the order the model sees stays stable.
func (t *Toolset) Register(tool Tool) {
	name := tool.Def().Name
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.tools[name]; !ok {
		t.order = append(t.order, name)
	}
	t.tools[name] = tool
}

// Definitions returns the tool definitions in registration order, built-ins
// first.
func (t *Toolset) Definitions() []ToolDef {
	t.mu.RLock()
	defer t.mu.RUnlock()
	defs := make([]ToolDef, 0, len(t.order))
	for _, tool := range t.all() {
		defs = append(defs, tool.Def())
	}
	return defs
}

// all are the tools t offers in its mode, registered ones first; callers
// hold mu.
func (t *Toolset) all() []Tool {
	m := t.Mode()
	out := make([]Tool, 0, len(t.order))
	for _, name := range t.order {
		if m.Allows(Info(name)) {
			out = append(out, t.tools[name])
		}
	}
	return append(out, t.sourceTools()...)
}

// Call runs the named tool. Unknown names and malformed arguments come back
// as error results the model can act on.
func (t *Toolset) Call(ctx context.Context, name string, args json.RawMessage) Result {
	t.mu.RLock()
	tool, ok := t.tools[name]
	var names []string
	if !ok {
		// The names are only for the model's error: a miss is rare, a
		// call is not.
		names = slices.Clone(t.order)
		for _, st := range t.sourceTools() {
			names = append(names, st.Def().Name)
			if st.Def().Name == name {
				tool, ok = st, true
			}
		}
	}
	t.mu.RUnlock()
	if !ok {
		return errResult("unknown tool %q; available tools: %s", name, strings.Join(names, ", "))
	}
	if m := t.Mode(); !m.Allows(Info(name)) {
		// read-only promises that nothing writes a file, as codex's does:
		// the sandbox holds run_command to it, and this holds ralph's own
		// file tools, which run in ralph's process outside the sandbox.
		// The mode does not offer them; this refuses a model that names
		// one anyway.
		return errResult("%s", m.refusal(name))
	}
	if at := t.addedFor(name, args); at != nil {
		return at.Call(ctx, name, args)
	}
	res := tool.Run(ctx, args)
	res.Output = TruncateMiddle(res.Output, t.maxOut+resultSlack)
	return res
}

// errResult formats an error result for the model.
func errResult(format string, a ...any) Result {
	return Result{Output: fmt.Sprintf(format, a...), IsError: true}
}

// decodeArgs unmarshals tool arguments into dst, a pointer to the tool's
// params struct, and checks that the fields it requires are present. Its
// errors are single sentences meant for the model, which will read them
// and retry the call.
func decodeArgs(tool string, raw json.RawMessage, dst any) error {
	required := Required(dst)
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		trimmed = "{}"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(trimmed), &fields); err != nil {
		return fmt.Errorf("arguments for %s must be a JSON object (%v)", tool, describeJSONError(err))
	}
	var missing []string
	for _, name := range required {
		if v, ok := fields[name]; !ok || strings.TrimSpace(string(v)) == "null" {
			missing = append(missing, `"`+name+`"`)
		}
	}
	if len(missing) > 0 {
		noun := "argument"
		if len(missing) > 1 {
			noun = "arguments"
		}
		return fmt.Errorf("%s is missing the required %s %s", tool, noun, strings.Join(missing, ", "))
	}
	if err := json.Unmarshal([]byte(trimmed), dst); err != nil {
		return fmt.Errorf("invalid arguments for %s: %v", tool, describeJSONError(err))
	}
	return nil
}

// describeJSONError turns encoding/json errors into wording that names the
// argument and the JSON type expected, which is what the model needs.
func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return fmt.Sprintf("got a JSON %s", typeErr.Value)
		}
		want := jsonTypeName(typeErr.Type.Kind().String())
		if want == "number" && strings.HasPrefix(typeErr.Value, "number") {
			return fmt.Sprintf("argument %q must be a whole number, not %s", typeErr.Field, strings.TrimPrefix(typeErr.Value, "number "))
		}
		return fmt.Sprintf("argument %q must be a %s, not a %s", typeErr.Field, want, typeErr.Value)
	}
	return err.Error()
}

// jsonTypeName maps a Go kind name to the JSON type the model should send.
func jsonTypeName(kind string) string {
	switch {
	case kind == "string":
		return "string"
	case kind == "bool":
		return "boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice", kind == "array":
		return "array"
	default:
		return "object"
	}
}

// Shell is the name of the shell run_command runs commands with.
func (t *Toolset) Shell() string { return filepath.Base(t.shell) }
