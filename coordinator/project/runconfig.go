package project

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers"
)

// ErrBadRunConfig is a task loop configuration that cannot work (a
// condition that does not compile, an unknown agent): exit 2.
var ErrBadRunConfig = errors.New("bad run configuration")

// settle decides the run configuration of a task-loop session and checks
// that the model can be reached when it is needed: an external agent
// (--agent) needs no key of ralph's.
func (p *Project) settle(opts Options, saved *memory.RunConfig) (*memory.RunConfig, error) {
	var run *memory.RunConfig
	if p.Mode == ModeRun && opts.Run != nil {
		var err error
		if run, err = opts.Run(saved); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRunConfig, err)
		}
		if err := checkAgent(run, p.Root); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRunConfig, err)
		}
		if err := checkRunGit(context.Background(), run, p.Root); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRunConfig, err)
		}
	}
	err := p.Config.Validate()
	if err != nil && !(run != nil && run.Agent != "" && errors.Is(err, config.ErrNoKey)) {
		return nil, err
	}
	return run, nil
}

// checkAgent checks that the run's external agent can start from the
// project root, where it runs: a relative exec: path is only known there.
func checkAgent(run *memory.RunConfig, root string) error {
	if run == nil || run.Agent == "" {
		return nil
	}
	a, err := workers.ParseAgentSpec(run.Agent)
	if err != nil {
		return err
	}
	return a.Check(root)
}
