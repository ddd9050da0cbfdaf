package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/models"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/text"
)

// endpointClient is a client for the configured endpoint, made as a
// session makes it but used only for `ralph doctor`'s and `ralph models`'
// questions.
func endpointClient(cfg config.Config) *llm.Client { return models.Client(cfg) }

// modelsCommand is `ralph models`: what the endpoint serves.
func (c *cli) modelsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "models",
		Short: "List the models the endpoint serves, marking the configured one (--json)",
		Long: `List the models the configured provider's endpoint serves (GET /models; for
Anthropic's Messages API GET /v1/models), with the context length it serves each
with when it says so. The configured model is marked with *; --provider, --model
and --base-url ask about another.`,
		Example: `  ralph models
  ralph models --provider anthropic
  ralph models --base-url ` + localEndpoint() + `
  ralph models --json | jq -r '.models[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := c.loadEffective(cmd)
			if err != nil {
				return usageErrorf("%s", err)
			}
			models, err := endpointClient(e.Cfg).Models(cmd.Context())
			if err != nil {
				fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
				if llm.IsConfigError(err) {
					return exit(ExitUsage)
				}
				return exit(ExitFailed)
			}
			return writeModels(c.stdout(), e.Cfg, models, c.f.json)
		},
	}
}

// writeModels prints the served models, the configured one marked.
func writeModels(w io.Writer, cfg config.Config, models []llm.ServedModel, asJSON bool) error {
	listed := false
	for _, m := range models {
		listed = listed || m.ID == cfg.Model
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"provider": cfg.Provider, "base_url": cfg.BaseURL, "configured": cfg.Model, "configured_listed": listed, "models": models})
	}
	for _, m := range models {
		mark := " "
		if m.ID == cfg.Model {
			mark = "*"
		}
		if m.ContextLength > 0 {
			fmt.Fprintf(w, "%s %s (context %d tokens)\n", mark, m.ID, m.ContextLength)
		} else {
			fmt.Fprintf(w, "%s %s\n", mark, m.ID)
		}
	}
	if !listed {
		fmt.Fprintf(os.Stderr, "ralph: the configured model %q is not among the %s %s serves; pick one with --model, RALPH_MODEL or model in the config\n", cfg.Model, text.Counted(len(models), "model", "models"), cfg.BaseURL)
	}
	return nil
}
