package memory

// TaskCounts is how many tasks are in each state. It stays in memory,
// where the plan formats' code (memory/planfile) is not, because a
// session's state (State.Tasks) and the registry's archive record keep it.
type TaskCounts struct {
	Open       int `json:"open"`
	InProgress int `json:"in_progress"`
	Done       int `json:"done"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	Total      int `json:"total"`
}
