package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/skills"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// RunFunc is the body of a tool whose running belongs to the layer above
// (the loop's claim, the review's reports, spawn_agent): that layer hands
// the body to Build, and the list makes the tool.
type RunFunc func(ctx context.Context, args json.RawMessage) workers.Result

// Deps are what the tools of the list are built from. Each row's
// constructor takes the dependencies it needs and builds nothing when one
// is absent, so a Deps value says which tools Build makes.
type Deps struct {
	// Files is the Toolset the file tools and run_command work in.
	Files *Toolset
	// Fs, Root and Redact are the project's state files, for remember and
	// complete_task (both need all three).
	Fs     afero.Fs
	Root   string
	Redact *memory.Redactor
	// Decide records an agent's decision (record_decision).
	Decide func(memory.DecisionRecord) error
	// Asker asks the person (ask_user).
	Asker UserAsker
	// Plan writes a new plan (write_plan).
	Plan *PlanWriter
	// Todo keeps the todo list an agent set (update_plan).
	Todo SetTodo
	// Skills are the session's skills (skill), fixed at its start; Root
	// names a project skill's files for read_file.
	Skills *skills.Set
	// The bodies run above the tools: the task loop's complete_task, the
	// coordinator's spawn_agent, a review's reports.
	Claim, Spawn, Findings, Verdicts, Fixed RunFunc
}

func (d Deps) files(build func(*Toolset) Tool) Tool {
	if d.Files == nil {
		return nil
	}
	return build(d.Files)
}

func (d Deps) state(build func(afero.Fs, string, *memory.Redactor) Tool) Tool {
	if d.Fs == nil || d.Root == "" || d.Redact == nil {
		return nil
	}
	return build(d.Fs, d.Root, d.Redact)
}

func (d Deps) run(key string, body RunFunc) Tool {
	if body == nil {
		return nil
	}
	return NewTool(Def(key), body)
}

// Build makes the tools of the list whose dependencies d holds, in the
// list's order. It is the one constructor of the tools a model is
// offered: every other package hands it its dependencies.
func Build(d Deps) []Tool {
	var out []Tool
	for _, row := range tools {
		if tool := row.build(d); tool != nil {
			out = append(out, listTool{Tool: tool, key: row.key})
		}
	}
	return out
}

// listTool is a tool Build made, which knows its row (a row's roles
// tell complete_task in chat from the task loop's, which share a name).
type listTool struct {
	Tool
	key string
}

// Role is who an agent is, which decides the tools of the list it is
// offered (each row's roles).
type Role uint8

const (
	// RoleMain is the conversation's coordinator.
	RoleMain Role = 1 << iota
	// RoleChild is a child agent spawn_agent started.
	RoleChild
	// RoleWorker is the task loop's agent for one task.
	RoleWorker
	// RoleReviewer is a review's finder or checker: it reads and reports.
	RoleReviewer
	// RoleFixer is a review's fixer.
	RoleFixer

	// Doers are the roles that change the project.
	Doers = RoleMain | RoleChild | RoleWorker | RoleFixer
	// AllRoles is every role.
	AllRoles = Doers | RoleReviewer
)

// rolesOf are the roles a tool is offered to: its row's, or for a tool
// not of the list (an MCP server's), every role that may change
// something, since nobody knows what it does.
func rolesOf(tool Tool) Role {
	if lt, ok := tool.(listTool); ok {
		for _, row := range tools {
			if row.key == lt.key {
				return row.roles
			}
		}
	}
	if info := Info(tool.Def().Name); info.ReadOnly {
		return AllRoles
	}
	return Doers
}

// Mode is what the session allows: the sandbox mode and the network.
type Mode struct {
	Sandbox sandbox.Mode
	Network bool
}

// Allows reports whether a tool that needs info may be offered in m: in
// read-only nothing of ralph's own process writes a file but ralph's
// records, and without the network no tool reaches it.
func (m Mode) Allows(info ToolInfo) bool {
	if m.Sandbox == sandbox.ReadOnly && info.WritesInProcess && !info.Records {
		return false
	}
	return m.Network || !info.Network
}

// refusal is what the model reads when it names a tool the mode does not
// offer.
func (m Mode) refusal(name string) string {
	if !m.Network && Info(name).Network {
		return name + " was not done: the network is off (--no-network), so no tool may reach it"
	}
	return name + " was not done: the sandbox is read-only (--sandbox read-only), so no file may be written; " +
		"say what you would change instead, or ask the user to rerun ralph with --sandbox workspace-write"
}

// Offered reports whether a tool of the list named name is offered to
// role in mode m; a name the list does not have is an MCP server's, which
// the doers are offered.
func Offered(name string, role Role, m Mode) bool {
	known := false
	for _, row := range tools {
		if row.name != name {
			continue
		}
		known = true
		if row.roles&role != 0 && m.Allows(row.info) {
			return true
		}
	}
	return !known && role&Doers != 0
}

// PeerTool is a tool's name among the peer agents (Claude Code's) and
// how its input maps to ralph's arguments, for rules (--allowed-tools),
// hooks and agent definitions written for Claude Code: the Claude
// family's face of the tool (family_claude.go).
type PeerTool struct {
	// Name is Claude Code's name of the tool ("Bash"); Aliases are its
	// other tools ralph answers with this one ("MultiEdit").
	Name    string
	Aliases []string
	// Input maps Claude Code's input field to ralph's argument
	// ("file_path" to "path") where the two shapes differ by names only.
	Input map[string]string
	// ToPeer and FromPeer map a tool whose input is not field for field
	// Claude Code's (Bash's timeout in milliseconds, update_plan's plan
	// and TodoWrite's todos) in place of Input: ralph's arguments to
	// Claude Code's input, and Claude Code's input (a hook's
	// updatedInput) to ralph's arguments, which the caller lays over the
	// arguments it had.
	ToPeer   func(args json.RawMessage) (map[string]json.RawMessage, bool)
	FromPeer func(input json.RawMessage) (json.RawMessage, error)
}

// ByPeerName is ralph's name of the tool Claude Code calls name (or any
// tool family does, shell_command and view_image among them; or of
// ralph's own tool called name), case folded; "" when ralph has none.
// WebSearch is the provider's search (ToolWebSearch), which is no row of
// the list.
func ByPeerName(name string) string {
	for _, row := range tools {
		if strings.EqualFold(row.name, name) {
			return row.name
		}
	}
	if s := webSearchName(name); s != "" {
		return s
	}
	return byFamilyName(name)
}

// Peer is the Claude Code name and input shape of ralph's tool name;
// the zero PeerTool when Claude Code has no such tool.
func Peer(name string) PeerTool {
	fc := peerFace(name)
	if fc == nil {
		return PeerTool{}
	}
	p := PeerTool{Name: fc.name, Aliases: fc.aliases, Input: fc.renames}
	if fc.out != nil {
		p.ToPeer = func(args json.RawMessage) (map[string]json.RawMessage, bool) {
			b, ok := fc.out(args)
			var m map[string]json.RawMessage
			if !ok || json.Unmarshal(b, &m) != nil {
				return nil, false
			}
			return m, true
		}
	}
	if fc.in != nil {
		p.FromPeer = func(input json.RawMessage) (json.RawMessage, error) {
			_, out, err := fc.in(input)
			return out, err
		}
	}
	return p
}

// Unnamed are the tools of the list Claude Code has no name for (ralph's
// own bookkeeping: remember, complete_task, record_decision, ask_user,
// write_plan, a review's reports), but spawn_agent: a list of tools
// written for Claude Code (a custom command's allowed-tools) can neither
// name nor take them away. spawn_agent is not among them, so such a list
// leaves no child with more than it names.
func Unnamed() []string {
	var out []string
	for _, row := range tools {
		if peerFace(row.name) == nil && row.name != ToolSpawnAgent && !slices.Contains(out, row.name) {
			out = append(out, row.name)
		}
	}
	return out
}

// PeerInput rewrites ralph's arguments of tool name in Claude Code's
// input shape ({"path": …} to {"file_path": …}); arguments with no field
// in Claude Code's shape are left out. ok is false for a tool Claude Code
// does not have or arguments that are not an object.
func PeerInput(name string, args json.RawMessage) (input map[string]json.RawMessage, ok bool) {
	c := Peer(name)
	if c.Name != "" && c.ToPeer != nil {
		return c.ToPeer(args)
	}
	var ours map[string]json.RawMessage
	if c.Name == "" || json.Unmarshal(args, &ours) != nil {
		return nil, false
	}
	input = map[string]json.RawMessage{}
	for theirs, field := range c.Input {
		if v, ok := ours[field]; ok {
			input[theirs] = v
		}
	}
	return input, true
}

// FileTools names the file tools and run_command among defs, in their
// order, as a system prompt lists them ("read_file, list_files, search
// and run_command", or a family's names for them): the ones the agent's
// role and the session's mode offer.
func FileTools(defs []ToolDef) string {
	var names []string
	for _, d := range defs {
		// A family's face is named as the family names it ("Read",
		// "shell_command").
		switch ByPeerName(d.Name) {
		case ToolReadFile, ToolWriteFile, ToolEditFile, ToolApplyPatch, ToolListFiles, ToolSearch, ToolRunCommand:
			names = append(names, d.Name)
		}
	}
	switch len(names) {
	case 0:
		return "the tools you are given"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
