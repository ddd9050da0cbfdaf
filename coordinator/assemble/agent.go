package assemble

import (
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/workers/agents"
)

// ExternalAgent is the task loop's external agent (--agent) as it runs in
// this project: ralph's defaults for its kind matched to the project's
// sandbox, -y and allowed_commands, then [agents.<kind>] of the config,
// then --agent-arg. price prices its usage when it reports no cost itself
// (nil: unknown); notices are sentences for the person before the loop
// starts: what the agent may change, and a --max-cost it cannot honour.
func ExternalAgent(p *project.Project, rc *memory.RunConfig) (agent agents.Agent, price *llm.Price, notices []string, err error) {
	agent, err = agents.Parse(rc.Agent)
	if err != nil {
		return agent, nil, nil, err
	}
	settings := p.Config.Agents[string(agent.Kind)]
	var allowed []string
	if p.Approval != nil {
		allowed = p.Approval.Rules()
	}
	agent = agent.Configure(agents.Policy{Sandbox: p.Config.Sandbox, Yes: p.Yes, Allowed: allowed},
		agents.Settings{Args: settings.Args, Env: settings.Env, Model: settings.Model}, rc.AgentArgs)
	agent.Root, agent.Timeout = p.Root, time.Duration(rc.TaskTimeout)
	// ralph's own key goes to the agent only if the agent needs it (codex
	// keeps OPENAI_*), whatever the variable is called.
	agent.DropEnv = []string{p.Config.APIKeyEnv}
	if w := agent.Writes(); w != "" {
		notices = append(notices, w)
	}
	// Model reads the agent's own config file (codex's), so once.
	model := agent.Model()
	switch {
	case settings.InputPrice > 0 || settings.OutputPrice > 0:
		price = &llm.Price{Input: settings.InputPrice, Output: settings.OutputPrice}
	default:
		if lp, ok := llm.ListPrice(model); ok && model != "" {
			price = &lp
		}
	}
	// Some CLIs report tokens but no cost; an exec: agent reports neither.
	if rc.MaxCost > 0 && agent.Kind != agents.AgentExec && !agent.ReportsCost() && price == nil {
		notices = append(notices, fmt.Sprintf("--max-cost cannot stop %s: ralph knows no price for its model %q; set input_price_per_mtok and output_price_per_mtok under [agents.%s] in your config",
			agent.Kind, model, agent.Kind))
	}
	return agent, price, notices, nil
}
