package tools

// JudgeFindingsParams are judge_findings' arguments: the review's
// checking agent gives a verdict on every finding and finishes. Its
// running is the review's (coordinator/review).
type JudgeFindingsParams struct {
	Verdicts []FindingVerdict `json:"verdicts" required:"true" description:"one verdict per finding"`
}

// FindingVerdict is the verdict on one finding.
type FindingVerdict struct {
	ID      string `json:"id" required:"true" description:"the finding's id (f1, f2, …)"`
	Verdict string `json:"verdict" required:"true" description:"confirmed (a real problem in this change) or rejected"`
	Reason  string `json:"reason" required:"true" description:"why, in a sentence"`
}
