package remote

// Ops are what a person asks of a running ralph (ralph stop, say, pause,
// continue, answer, watch, and the look a client takes to find the one it
// means): one vocabulary, defined here once, for the two ways a request
// travels. A local ralph gets it on its control socket
// (coordinator/control's Request.Op); a run on Temporal gets stop, say,
// pause and continue as its workflow's control signal (ralph-temporal's
// engine.Control.Op), and ralph hands the op to ralph-temporal as the
// word it is. A word that meant one thing on one path and another on the
// other would steer a run differently by where it runs.
const (
	OpStop     = "stop"
	OpSay      = "say"
	OpPause    = "pause"
	OpContinue = "continue"
	OpAnswer   = "answer"
	OpWatch    = "watch"
	// OpState asks what the ralph is (control.State): how a client finds
	// the one it means among the project's (control.Find).
	OpState = "state"
)
