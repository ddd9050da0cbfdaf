package tools

// SpawnAgentParams are spawn_agent's arguments.
type SpawnAgentParams struct {
	Task string `json:"task" required:"true" description:"the complete task for the child"`
}
