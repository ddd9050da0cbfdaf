package tools

// SpawnAgentParams are spawn_agent's arguments.
type SpawnAgentParams struct {
	Task string `json:"task" required:"true" description:"the complete task for the child"`
	// Agent names an agent definition (workers/agentdefs), Claude Code's
	// subagent_type: the child follows its prompt with its tools and
	// model.
	Agent string `json:"agent,omitempty" description:"the name of one of the agent definitions the system prompt lists; the child then follows that definition's instructions with its tools and model. Leave it out for a general child."`
}
