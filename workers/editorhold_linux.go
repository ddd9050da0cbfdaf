package workers

// canFreeze: on Linux proctree.Freeze stops every descendant of ralph's.
const canFreeze = true

// liveProcesses is not needed where Freeze stops them.
func liveProcesses() int64 { return 0 }

// trackLive is not needed where Freeze stops them.
func trackLive(<-chan struct{}) {}
