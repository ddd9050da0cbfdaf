package coordinator

// ToolNames are the names of the tools this coordinator's agent is
// offered, under ralph's own names (the ones its tool_call events carry),
// for a face that lists them before the first turn (the claude shape's
// init line). A tool that starts later (an MCP server's) is not among
// them until it has started.
func (c *Coordinator) ToolNames() []string {
	defs := toolDefs(c.toolSet(), c.opts.Children != nil)
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return names
}
