package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Each step of Load on its own: what it takes from a file, and the one
// sentence it refuses a value with. Load's own tests (config_test.go)
// show the steps together, in their order of precedence.

func TestDefaultsAreWhatResolveStartsFrom(t *testing.T) {
	t.Parallel()
	c := defaults(env{}.get)
	if c.Model != DefaultModel || c.BaseURL != DefaultBaseURL || c.MaxTurns != DefaultMaxTurns || !c.Network || c.Sandbox != DefaultSandbox {
		t.Errorf("defaults = %+v", c)
	}
	// Resolve tells a model a source gave from the default by these.
	if c.src.resolvedModel != c.Model || c.src.resolvedBaseURL != c.BaseURL || c.src.getenv == nil {
		t.Errorf("defaults' resolve state = %+v", c.src)
	}
}

func TestApplyEndpointKeepsTheKeyVariableTheUsers(t *testing.T) {
	t.Parallel()
	c := defaults(env{}.get)
	if err := c.applyEndpoint(File{APIKeyEnv: "MY_KEY"}, projectFile, true); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "api_key_env may only be set in your user config") {
		t.Errorf("project's api_key_env: %v", err)
	}
	if err := c.applyEndpoint(File{APIKeyEnv: "MY_KEY", BaseURL: "http://localhost:1/v1", Model: "m"}, userFile, false); err != nil {
		t.Fatal(err)
	}
	if c.APIKeyEnv != "MY_KEY" || c.BaseURL != "http://localhost:1/v1" || c.Model != "m" || c.BaseURLFromProject {
		t.Errorf("user's endpoint: %+v", c)
	}
	if err := c.applyEndpoint(File{BaseURL: "http://localhost:2/v1"}, projectFile, true); err != nil {
		t.Fatal(err)
	}
	// Validate weighs a project's endpoint against the one the person chose.
	if !c.BaseURLFromProject || c.userBaseURL != "http://localhost:1/v1" {
		t.Errorf("project's endpoint: from project %v, user's %q", c.BaseURLFromProject, c.userBaseURL)
	}
	if err := c.applyEndpoint(File{Provider: "nobody"}, userFile, false); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not one ralph knows") {
		t.Errorf("unknown provider: %v", err)
	}
}

func TestApplyModelChoice(t *testing.T) {
	t.Parallel()
	c := defaults(env{}.get)
	n := 2048
	if err := c.applyModelChoice(File{Wire: " Chat ", ThinkingTokens: &n}, userFile); err != nil {
		t.Fatal(err)
	}
	if c.Wire != "chat" || c.ThinkingTokens != 2048 {
		t.Errorf("wire %q, thinking %d", c.Wire, c.ThinkingTokens)
	}
	for _, f := range []File{{Wire: "smoke"}, {ToolFamily: "nobody"}} {
		if err := c.applyModelChoice(f, userFile); !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), userFile+": ") {
			t.Errorf("%+v: %v", f, err)
		}
	}
}

func TestApplyBudgets(t *testing.T) {
	t.Parallel()
	c := defaults(env{}.get)
	retries := 0
	f := File{MaxTurns: 7, ContextTokens: 4096, CheckpointMaxMB: 9, MaxOutputTokens: 100, InputPrice: 1, OutputPrice: 2,
		MaxRetries: &retries, CommandTimeoutS: 5, StreamIdleTimeout: "90s"}
	if err := c.applyBudgets(f, userFile); err != nil {
		t.Fatal(err)
	}
	if c.MaxTurns != 7 || c.ContextTokens != 4096 || c.CheckpointMaxFileMB != 9 || c.MaxOutputTokens != 100 ||
		c.InputPrice != 1 || c.OutputPrice != 2 || c.MaxRetries != 0 || c.CommandTimeout != 5*time.Second || c.IdleTimeout != 90*time.Second {
		t.Errorf("budgets = %+v", c)
	}
	// A file that names none leaves the ones before it.
	if err := c.applyBudgets(File{}, projectFile); err != nil || c.MaxTurns != 7 {
		t.Errorf("empty file: %v, max turns %d", err, c.MaxTurns)
	}
	if err := c.applyBudgets(File{StreamIdleTimeout: "soon"}, userFile); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "stream_idle_timeout") {
		t.Errorf("bad idle timeout: %v", err)
	}
}

func TestApplyRunChoices(t *testing.T) {
	t.Parallel()
	c := defaults(env{}.get)
	if err := c.applyRunChoices(File{Review: "end", Tracker: TrackerBeads, PlansDir: "docs/./plans/"}, projectFile); err != nil {
		t.Fatal(err)
	}
	if c.Review != "end" || c.Tracker != TrackerBeads || c.PlansDir != "docs/plans" {
		t.Errorf("review %q, tracker %q, plans %q", c.Review, c.Tracker, c.PlansDir)
	}
	for _, f := range []File{{Review: "always"}, {Tracker: "jira"}, {PlansDir: "../elsewhere"}, {PlansDir: "/abs"}} {
		if err := c.applyRunChoices(f, projectFile); !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), projectFile+": ") {
			t.Errorf("%+v: %v", f, err)
		}
	}
}

func TestApplyFileRefusesWhatOnlyThePersonMaySet(t *testing.T) {
	t.Parallel()
	for _, f := range []File{{InstructionLinks: []string{"~/AGENTS.md"}}, {NotifyCommand: "say done"}, {ShellEnv: []string{"GITHUB_TOKEN"}}} {
		c := defaults(env{}.get)
		if err := c.applyFile(f, projectFile, true); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "user config") {
			t.Errorf("project's %+v: %v", f, err)
		}
		if err := c.applyFile(f, userFile, false); err != nil {
			t.Errorf("user's %+v: %v", f, err)
		}
	}
}

func TestApplyEnv(t *testing.T) {
	t.Parallel()
	c := defaults(env{}.get)
	if err := c.applyEnv(env{"RALPH_MODEL": "m", "MAX_THINKING_TOKENS": " 2048 "}.get); err != nil {
		t.Fatal(err)
	}
	if c.Model != "m" || c.ThinkingTokens != 2048 {
		t.Errorf("model %q, thinking %d", c.Model, c.ThinkingTokens)
	}
	if err := c.applyEnv(env{"MAX_THINKING_TOKENS": "lots"}.get); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "MAX_THINKING_TOKENS") {
		t.Errorf("bad MAX_THINKING_TOKENS: %v", err)
	}
}
