package engine

import "time"

// The task loop's question on Temporal. When the machine asks a person
// (the breaker tripped, the budget is spent) and the run was started by
// someone who can answer (RunInput.Ask), the workflow waits on the answer
// signal beside its control signal, for AskTimeout at most; nobody
// answering in time is the question's default, no, as a local run whose
// person does not answer yes.

// SignalAnswer is the signal that answers the workflow's question.
const SignalAnswer = "answer"

// DefaultAskTimeout is how long the workflow waits for an answer when
// the run names no timeout.
const DefaultAskTimeout = 10 * time.Minute

// Answer is the answer signal's payload.
type Answer struct {
	Yes bool `json:"yes"`
}
