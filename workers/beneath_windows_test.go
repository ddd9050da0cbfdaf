package workers

import "sync/atomic"

// The tests shared with Unix run both of its resolvers (bothResolvers);
// Windows has one, so both runs take it.
var forceNoOpenat2 atomic.Bool

func hasOpenat2() bool { return false }
