package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrProjectSettings is an agent ralph does not start because the project
// holds settings of that agent's that could run programs outside any
// sandbox, and the agent has no switch to ignore them.
var ErrProjectSettings = errors.New("the project holds settings that would run programs outside the sandbox")

// checkProjectSettings refuses a CLI whose project holds one of the files
// it reads whatever it is told (cli.projectSettings): the model can write
// them, and they can make the CLI run the model's programs outside any
// sandbox. ralph offers no approval of their content here.
func checkProjectSettings(kind Kind, root string) error {
	c := cliFor(kind)
	if c == nil || root == "" {
		return nil
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.Clean(home) == filepath.Clean(root) {
		return nil // the person's own settings, as the CLIs read them there
	}
	for _, rel := range c.projectSettings() {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
			return fmt.Errorf("%w: %s reads %s, which the model can write and which can make it run programs (hooks, MCP servers) outside any sandbox, and it has no switch to leave it out; ralph does not start %s in this project: move the file away, or run %s yourself",
				ErrProjectSettings, kind, rel, kind, kind)
		}
	}
	return nil
}
