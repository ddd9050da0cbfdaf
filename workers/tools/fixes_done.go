package tools

// FixesDoneParams are fixes_done's arguments: the review's fixing agent
// says what it changed and finishes. Its running is the review's
// (coordinator/review).
type FixesDoneParams struct {
	Summary string `json:"summary" required:"true" description:"what you changed, finding by finding"`
}
