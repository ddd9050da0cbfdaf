// Package tools implements the tools the model calls: reading, writing and
// editing files, listing and searching the project, running shell
// commands, and the tools through which ralph keeps its records. They are
// built in one list (tools.go) and offered through a Toolset or a View of
// it. Every tool is confined to the project root (workers.Workspace), and
// every failure is returned as a Result the model can read instead of a Go
// error, so that a bad tool call becomes feedback for the model rather than
// a crash.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/lsp"
)

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
	Run(ctx context.Context, args json.RawMessage) workers.Result
}

// Options configures a Toolset: the workspace it works in, and who
// approves its commands.
type Options struct {
	workers.Options
	Approver Approver // nil refuses every command
	// Family, when set, is the tool family every model is offered,
	// whatever its name (tool_family in the configuration); nil follows
	// each model's (Faces).
	Family *providers.ToolFamily
	// AutoApprove says approvals are automatic (--yes): nobody would see a
	// request to leave the sandbox, so such requests are refused.
	AutoApprove bool
	// WebFetchAllowPrivate lets web_fetch reach loopback and
	// private-network addresses (the person's web_fetch_allow_private);
	// link-local and metadata addresses stay refused (workers/webfetch).
	WebFetchAllowPrivate bool
	// Redact takes the person's secrets out of every result the model is
	// sent: the credentials of the project's repositories among them, which
	// a command in the Landlock-only sandbox can read from .git/config
	// itself. nil redacts nothing.
	Redact *memory.Redactor
	// LSP are the session's language-server settings (workers/lsp): the
	// servers start on the first edit of a file they handle, and the
	// edit tools' results carry their diagnostics. nil starts none.
	LSP *lspSettings
	// ApproveLSP decides whether a language server a project's config
	// names may start, as a project's MCP server is approved; nil
	// refuses them.
	ApproveLSP func(ctx context.Context, s lspServer) error
}

const (
	maxCommandTimeout = 3600 * time.Second

	// resultSlack is how far past MaxOutputBytes a result may grow before
	// Call cuts it. Built-in tools budget their payload to MaxOutputBytes and
	// add short headers and notes on top; the slack keeps those intact while
	// still bounding results of registered tools that do not budget at all.
	resultSlack = 1024
)

// Toolset holds the built-in tools plus any registered ones and dispatches
// calls by name. It is safe for concurrent use.
type Toolset struct {
	// ws is where the tools work: the root, its files and its sandbox.
	ws          *workers.Workspace
	approver    Approver
	autoApprove bool
	// opts are the options t was made with, for Rooted.
	opts Options

	mu      sync.RWMutex
	tools   map[string]Tool
	order   []string
	sources []Source

	// added are the directories of --add-dir (adddirs.go).
	added []*Toolset

	// faces offers the tools to each model in its family's terms
	// (families.go).
	faces *Faces

	// lsp is the session's language servers, nil when none may start
	// (diagnostics.go).
	lsp *lsp.Set

	// todos is each agent's todo list as its last TodoWrite hook input
	// had it ([]peerTodoItem by agent), for the next call's oldTodos.
	todos sync.Map
}

// NewToolset checks the root and returns a Toolset with the built-in tools
// registered.
func NewToolset(opts Options) (*Toolset, error) {
	ws, err := workers.NewWorkspace(opts.Options)
	if err != nil {
		return nil, err
	}
	opts.Options = ws.Options() // its copies share the note of withheld variables
	t := &Toolset{
		ws:          ws,
		opts:        opts,
		autoApprove: opts.AutoApprove,
		approver:    opts.Approver,
		tools:       make(map[string]Tool),
		faces:       &Faces{Family: opts.Family},
	}
	if t.approver == nil {
		t.approver = refuseAll{}
	}
	t.lsp = newLSP(t, opts)
	for _, b := range Build(Deps{Files: t}) {
		t.Register(b)
	}
	if t.added, err = newAddedDirs(opts); err != nil {
		ws.Close()
		return nil, err
	}
	return t, nil
}

// Offer is the tools and the conversation in model's terms: its tool
// family's names, descriptions and input shapes (llm.ToolFaces).
func (t *Toolset) Offer(model string, defs []ToolDef, msgs []conversation.Message) ([]ToolDef, []conversation.Message) {
	return t.faces.Offer(model, defs, msgs)
}

// Canonical is a call model made as the call of ralph's tool
// (llm.ToolFaces).
func (t *Toolset) Canonical(model string, call conversation.ToolCall) conversation.ToolCall {
	return t.faces.Canonical(model, call)
}

// Family is the tool family model is offered.
func (t *Toolset) Family(model string) providers.ToolFamily { return t.faces.FamilyFor(model) }

// Workspace is where t's tools work: its root, files and sandbox, for
// the programs that run there too (verify commands, MCP servers).
func (t *Toolset) Workspace() *workers.Workspace { return t.ws }

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
	return Mode{Sandbox: t.ws.Policy().Mode, Network: !t.opts.NoNetwork}
}

// Close stops the sandbox's helper process, if one was started; commands
// still running are killed with it. The Toolset must not be used after.
func (t *Toolset) Close() {
	t.lsp.Close()
	t.ws.Close()
	for _, d := range t.added {
		d.Close()
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
func (t *Toolset) Root() string { return t.ws.Root() }

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

// Call runs the named tool, through its hooks when ctx carries some
// (WithHooks). Unknown names and malformed arguments come back as error
// results the model can act on.
func (t *Toolset) Call(ctx context.Context, name string, args json.RawMessage) workers.Result {
	if h := hooksOf(ctx); h != nil {
		return hooked(ctx, h, t, name, args, func(ctx context.Context, args json.RawMessage) workers.Result {
			return t.call(ctx, name, args)
		})
	}
	return t.call(ctx, name, args)
}

// call runs the named tool; its hooks, if any, have fired or will (Call).
func (t *Toolset) call(ctx context.Context, name string, args json.RawMessage) workers.Result {
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
		return at.call(ctx, name, args)
	}
	res := t.stepped(name, func() workers.Result { return tool.Run(ctx, args) })
	res = t.withDiagnostics(ctx, name, res)
	res.Output = workers.TruncateMiddle(t.opts.Redact.Redact(res.Output), t.ws.MaxOutput()+resultSlack)
	return res
}

// errResult formats an error result for the model.
func errResult(format string, a ...any) workers.Result {
	return workers.Result{Output: fmt.Sprintf(format, a...), IsError: true}
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
func (t *Toolset) Shell() string { return t.ws.Shell() }
