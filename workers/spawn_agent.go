package workers

// SpawnAgentParams are spawn_agent's arguments.
type SpawnAgentParams struct {
	Task string `json:"task" required:"true" description:"the complete task for the child"`
}

// SpawnAgentDef is spawn_agent's definition. The tool itself belongs to
// the coordinator, which alone can start agents; its description and
// schema live here beside every other tool's, so the model's view of all
// tools is in one place and one golden file.
func SpawnAgentDef() ToolDef {
	return Def("spawn_agent")
}
