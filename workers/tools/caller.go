package tools

import "context"

// Caller is who calls a tool: the agent ("main" for the coordinator, "a3"
// for a child) and the task it works on, "" outside the task loop. Tools
// that record what an agent did (record_decision) say whose it was; the
// rest ignore it.
type Caller struct {
	Agent string
	Task  string
}

type callerKey struct{}

// WithCaller returns ctx carrying c, for the tools called with it.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the caller ctx carries, the zero Caller when none.
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
