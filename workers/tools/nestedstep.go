package tools

import "github.com/ralph-dev/ralph/workers"

// A nested repository's configuration names programs that the person's
// next git status at the top runs outside any sandbox; the sandbox's
// nested guard takes back a program key that appeared in one. It checks
// after every command, and here after every call of a tool that may
// write from ralph's own process, whichever family's name the model
// called it by (the families map every name to ralph's tool before the
// call reaches the Toolset): write_file, edit_file, apply_patch, ralph's
// record tools, an MCP server's tool, and any tool added to the list
// later that does not declare itself ReadOnly. Every route that runs a
// tool goes through stepped (TestEveryToolRunIsStepped).

// checkedAfter reports whether a call of a tool with info is a step the
// nested guard checks after: every tool that may write, unless all it
// writes goes through sandboxed commands, which the guard checks after
// each; a tool ralph does not know (an MCP server's, whose info is the
// zero ToolInfo) may do anything, and is checked.
func checkedAfter(info ToolInfo) bool { return !info.ReadOnly && !info.Sandboxed }

// stepped runs one call of the tool name: as a step the nested guard
// checks after, when the tool may write.
func (t *Toolset) stepped(name string, run func() workers.Result) workers.Result {
	if !checkedAfter(Info(name)) {
		return run()
	}
	done := t.ws.WriteStep()
	return done(name, run())
}
