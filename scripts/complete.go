package scripts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/scripts/view"
	"github.com/ralph-dev/ralph/workers/agents"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// addValueCompletions lets the shell complete the values of the flags
// that take one of a few words, a session id or a model name, on every
// command that has them (ralph run's --agent, the root's --resume, ...).
func (c *cli) addValueCompletions(root *cobra.Command) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	byFlag := map[string]cobra.CompletionFunc{
		"sandbox": fixed(
			string(sandbox.ReadOnly)+"\tcommands change nothing",
			string(sandbox.WorkspaceWrite)+"\tcommands change the project only (the default)",
			string(sandbox.FullAccess)+"\tno sandbox"),
		"output-format":   fixed(FormatText, FormatJSON, FormatStreamJSON),
		"style":           fixed("auto", "dark", "light", "notty"),
		"permission-mode": fixed(permissionModes...),
		// exec: takes a command after it, so the shell adds no space.
		"agent":    agentCompletions,
		"reviewer": agentCompletions,
		"resume":   c.sessionCompletions,
		"session":  c.sessionCompletions,
		"model":    c.modelCompletions,
	}
	// --resume takes its id as the next word (resumeArgs), so the word
	// after a bare --resume completes as one.
	root.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if c.f.conv.resume == pickSession && len(args) == 0 {
			return c.sessionCompletions(cmd, args, toComplete)
		}
		return nil, cobra.ShellCompDirectiveDefault
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for name, fn := range byFlag {
			if cmd.NonInheritedFlags().Lookup(name) != nil {
				// A flag shared by several commands is registered once;
				// the error for the second time says only that.
				_ = cmd.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// agentCompletions are the agents --agent takes, as workers/agents names
// them.
func agentCompletions(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return append(agents.Names(), "exec:"), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// sessionCompletions are the project's sessions, newest first, each
// described by its first prompt, which is what a person remembers it by.
// Sessions opened and left without a word are left out, as the picker
// leaves them out.
func (c *cli) sessionCompletions(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const most = 50
	root, err := project.Root(c.f.dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	fs, err := rootfs.New(root)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ids, err := memory.ListSessions(fs, root)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for i := len(ids) - 1; i >= 0 && len(out) < most; i-- {
		if memory.SessionEmpty(fs, root, ids[i]) {
			continue
		}
		prompt := memory.FirstPrompt(fs, root, ids[i])
		out = append(out, cobra.CompletionWithDesc(ids[i], view.OneLine(prompt, 60)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// modelListTTL is how long the endpoint's model list is taken from the
// cache; modelListTimeout is the longest completion waits for the
// endpoint, so that a slow or absent server never holds up the shell.
const (
	modelListTTL     = 10 * time.Minute
	modelListTimeout = 2 * time.Second
)

// modelCompletions are the models the configured endpoint serves (GET
// /models), from a cache file under the user's cache directory while it
// is fresh. A config that would not let ralph call the endpoint (no key
// for a remote one, a project's base_url that may not get the key) gets
// no list, and the endpoint is never sent the key it would be refused.
func (c *cli) modelCompletions(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	root, _ := project.Root(c.f.dir)
	cfg, err := project.LoadConfig(root, os.Getenv)
	if err != nil {
		return nil, none
	}
	if c.f.baseURL != "" {
		cfg.SetBaseURL(c.f.baseURL)
	}
	if cfg.Validate() != nil {
		return nil, none
	}
	cache := modelCacheFile(cfg.BaseURL)
	if models, ok := readModelCache(cache, cfg.BaseURL); ok {
		return models, none
	}
	ctx, cancel := context.WithTimeout(context.Background(), modelListTimeout)
	defer cancel()
	models, err := listModels(ctx, cfg)
	if err != nil {
		return nil, none
	}
	writeModelCache(cache, cfg.BaseURL, models)
	return models, none
}

// listModels is the ids of the models the endpoint serves, through the
// one client `ralph models` and `ralph doctor` ask with.
func listModels(ctx context.Context, cfg config.Config) ([]string, error) {
	served, err := endpointClient(cfg).Models(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(served))
	for _, m := range served {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// modelCache is a cache file: an endpoint's models and when they were
// asked for.
type modelCache struct {
	BaseURL string    `json:"base_url"`
	Fetched time.Time `json:"fetched"`
	Models  []string  `json:"models"`
}

// modelCacheFile is the cache file of an endpoint, named by a hash of its
// URL; "" when the user has no cache directory.
func modelCacheFile(baseURL string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(baseURL))
	return filepath.Join(dir, "ralph", "models-"+hex.EncodeToString(sum[:8])+".json")
}

// readModelCache is the cached list of baseURL if it is younger than
// modelListTTL.
func readModelCache(path, baseURL string) ([]string, bool) {
	if path == "" {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var mc modelCache
	if json.Unmarshal(data, &mc) != nil || mc.BaseURL != baseURL || time.Since(mc.Fetched) > modelListTTL || time.Since(mc.Fetched) < 0 {
		return nil, false
	}
	return mc.Models, true
}

// writeModelCache keeps the list for the next completion; a cache that
// cannot be written only costs the next one a request.
func writeModelCache(path, baseURL string, models []string) {
	if path == "" {
		return
	}
	data, err := json.Marshal(modelCache{BaseURL: baseURL, Fetched: time.Now(), Models: models})
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}
