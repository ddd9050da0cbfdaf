// Package loop is the task loop's configuration: the run configuration's
// defaults, its checks, and the conditions (--until, --breaker) compiled
// with expr. ralph run, /run in chat, ralph resume and ralph-temporal's
// workers all take it from here, so that a loop is set up the same way
// whichever face starts it.
package loop

import (
	"fmt"
	"math"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/agentdefs"
	"github.com/ralph-dev/ralph/workers/agents"
)

// DefaultRun is the configuration of `ralph run` before any flag.
func DefaultRun() memory.RunConfig {
	return memory.RunConfig{
		MaxIterations: 100, OnError: OnErrorRetry, Retries: 2,
		TaskTimeout:     memory.Duration(coordinator.DefaultChildTimeout),
		BreakerCooldown: memory.Duration(DefaultBreakerCooldown),
	}
}

// Setup is a run configuration compiled for the task loop.
type Setup struct {
	Until, Breaker Condition
	// External is the CLI agent that works the tasks (--agent), nil
	// for ralph's own child agents.
	External *agents.Agent
	// Definition is the agent definition ralph's child agents follow
	// (--agent def:NAME), "" for none.
	Definition string
}

// CheckRun reports a run configuration that cannot work, in one sentence:
// a negative or zero limit, an unknown --on-error, a condition that does
// not compile, an agent that is unknown or cannot start. It is checked
// before any work starts, so a typo costs nothing. (An exec: agent given
// by a relative path is checked against the project root when the project
// is opened, see project.Open.)
func CheckRun(rc *memory.RunConfig) error {
	_, err := Compile(rc)
	return err
}

func Compile(rc *memory.RunConfig) (Setup, error) {
	var s Setup
	switch {
	case rc.Parallel < 0:
		return s, fmt.Errorf("--parallel cannot be negative (got %d); it is how many tasks are worked at once", rc.Parallel)
	case rc.TaskTimeout <= 0:
		return s, fmt.Errorf("--task-timeout must be positive, not %s", time.Duration(rc.TaskTimeout))
	case rc.MaxCost < 0 || math.IsNaN(rc.MaxCost):
		return s, fmt.Errorf("--max-cost cannot be negative (got %v); 0 means no limit", rc.MaxCost)
	case rc.MaxIterations <= 0:
		return s, fmt.Errorf("--max-iterations must be at least 1, not %d", rc.MaxIterations)
	case rc.Retries < 0:
		return s, fmt.Errorf("--retries cannot be negative (got %d)", rc.Retries)
	case rc.BreakerCooldown < 0:
		return s, fmt.Errorf("--breaker-cooldown cannot be negative (got %s)", time.Duration(rc.BreakerCooldown))
	}
	switch rc.OnError {
	case OnErrorRetry, OnErrorSkip, OnErrorAbort:
	default:
		return s, fmt.Errorf("--on-error must be retry, skip or abort, not %q", rc.OnError)
	}
	switch {
	case rc.Review != "" && rc.Review != "task" && rc.Review != "end":
		return s, fmt.Errorf("--review must be task (after each task) or end (after the last), not %q", rc.Review)
	case rc.ReviewRounds < 0:
		return s, fmt.Errorf("--review-rounds cannot be negative (got %d)", rc.ReviewRounds)
	}
	var err error
	if rc.Until != "" {
		if s.Until, err = CompileCondition("--until", rc.Until); err != nil {
			return s, err
		}
	}
	if rc.Breaker != "" {
		if s.Breaker, err = CompileCondition("--breaker", rc.Breaker); err != nil {
			return s, err
		}
	}
	if name, ok, err := agentdefs.ParseSpec(rc.Agent); ok {
		if err != nil {
			return s, err
		}
		if len(rc.AgentArgs) > 0 {
			return s, fmt.Errorf("--agent-arg goes with --agent %s, not with an agent definition", agents.Choices())
		}
		s.Definition = name
	} else if rc.Agent != "" {
		a, err := agents.Parse(rc.Agent)
		if err != nil {
			return s, err
		}
		if err := a.Check(""); err != nil {
			return s, err
		}
		s.External = &a
	} else if len(rc.AgentArgs) > 0 {
		return s, fmt.Errorf("--agent-arg goes with --agent %s", agents.Choices())
	}
	return s, nil
}
