package event

// TaskAttempt is the task loop's account of one attempt at a task. The
// event that begins an attempt carries its number only; the one that ends
// it also how its verification went and, if it failed, why.
type TaskAttempt struct {
	// Number is the attempt's number, from 1.
	Number int `json:"number"`
	// Verify is how the --verify command went, on the event that ends
	// the attempt.
	Verify *VerifyRun `json:"verify,omitempty"`
	// Error is why the attempt failed.
	Error string `json:"error,omitempty"`
}

// VerifyRun is one run of the task loop's --verify command. Output keeps
// the end of what it printed, where test runners put their verdict.
type VerifyRun struct {
	// OK says the command succeeded.
	OK bool `json:"ok"`
	// DurationMS is how long it ran.
	DurationMS int64 `json:"duration_ms"`
	// Output is the end of what it printed.
	Output string `json:"output,omitempty"`
}
