package tools

// ReportFindingsParams are report_findings' arguments: a reviewer of
// ralph's review reports its findings and finishes. Its definition is
// here beside every other tool's; its running is the review's
// (coordinator/review).
type ReportFindingsParams struct {
	Findings []ReportedFinding `json:"findings" required:"true" description:"the problems found; an empty list when there are none"`
}

// ReportedFinding is one finding as a reviewer reports it.
type ReportedFinding struct {
	File     string `json:"file" required:"true" description:"the file, relative to the project root"`
	Line     int    `json:"line,omitempty" description:"the line the problem is on"`
	Severity string `json:"severity" required:"true" description:"major (must be fixed before the work counts) or minor"`
	Why      string `json:"why" required:"true" description:"what is wrong and why, in a sentence or two"`
}
