package workers

// The tests of package workers_test, which drive the file tools
// (workers/tools) over both of the resolutions beneath the root, reach
// these through this file, which only the tests compile.
var (
	ForceNoOpenat2 = &forceNoOpenat2
	HasOpenat2     = hasOpenat2
)
