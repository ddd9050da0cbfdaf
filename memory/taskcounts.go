package memory

// The task counts stay in memory, where the plan formats' code
// (memory/planfile) is not, because a session's state (State.Tasks) and
// the registry's archive record keep them.

// TaskCounts is how many tasks are in each state.
type TaskCounts struct {
	Open       int `json:"open"`
	InProgress int `json:"in_progress"`
	Done       int `json:"done"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	Total      int `json:"total"`
}
