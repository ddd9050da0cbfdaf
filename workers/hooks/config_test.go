package hooks

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseKeepsSourceTimeoutAndWarns(t *testing.T) {
	data := `{"hooks": {
	  "PreToolUse": [{"matcher": "Bash|Write", "hooks": [
	    {"type": "command", "command": "guard.sh", "timeout": 30},
	    {"type": "prompt", "prompt": "is this safe?", "model": "haiku", "if": "Bash(rm:*)"},
	    {"type": "agent", "prompt": "verify it"}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}],
	  "SessionStart": [{"hooks": [{"type": "prompt", "prompt": "greet"}]}],
	  "TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}],
	  "PostToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "y"}]}]
	}, "model": "opus"}`
	cfg, err := Parse([]byte(data), SourcePlugin, "/p/hooks/hooks.json", "/p")
	if err != nil {
		t.Fatal(err)
	}
	want := []Hook{
		{Event: PreToolUse, Matcher: "Bash|Write", Command: "guard.sh", Timeout: 30 * time.Second, Source: SourcePlugin, File: "/p/hooks/hooks.json", PluginRoot: "/p"},
		{Event: PreToolUse, Matcher: "Bash|Write", Command: "prompt (model haiku): is this safe?", Prompt: "is this safe?", Model: "haiku", If: "Bash(rm:*)",
			Timeout: DefaultPromptTimeout, Source: SourcePlugin, File: "/p/hooks/hooks.json", PluginRoot: "/p"},
		{Event: Stop, Command: "stop.sh", Timeout: DefaultTimeout, Source: SourcePlugin, File: "/p/hooks/hooks.json", PluginRoot: "/p"},
	}
	if len(cfg.Hooks) != len(want) {
		t.Fatalf("hooks = %+v, want %+v", cfg.Hooks, want)
	}
	for i := range want {
		if cfg.Hooks[i] != want[i] {
			t.Errorf("hook %d = %+v, want %+v", i, cfg.Hooks[i], want[i])
		}
	}
	all := strings.Join(cfg.Warnings, "\n")
	for _, w := range []string{`type "agent" are not supported`, `SessionStart hooks of type "prompt" are not run`, "no TeammateIdle hooks", `matcher "(" is no regular expression`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings %q lack %q", all, w)
		}
	}
	if cfg.Disabled {
		t.Error("disabled without disableAllHooks")
	}
}

func TestDisableAllHooksTurnsEveryFileOff(t *testing.T) {
	user, err := Parse([]byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}`), SourceUser, "u", "")
	if err != nil {
		t.Fatal(err)
	}
	local, err := Parse([]byte(`{"disableAllHooks": true}`), SourceProjectLocal, "l", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := Merge(user).For(Stop, ""); len(got) != 1 {
		t.Fatalf("For = %v, want the user's hook", got)
	}
	if got := Merge(user, local).For(Stop, ""); len(got) != 0 {
		t.Fatalf("For = %v, want none: disableAllHooks", got)
	}
}

func TestParseRefusesMalformedSettings(t *testing.T) {
	for _, data := range []string{`{`, `{"hooks": {"Stop": {"hooks": []}}}`} {
		if _, err := Parse([]byte(data), SourceProject, "f", ""); !errors.Is(err, ErrSettings) {
			t.Errorf("Parse(%s) = %v, want ErrSettings", data, err)
		}
	}
}

func TestMatchers(t *testing.T) {
	for _, c := range []struct {
		event   Event
		matcher string
		value   string
		want    bool
	}{
		{PreToolUse, "Bash", "Bash", true},
		{PreToolUse, "Bash", "bash", false},
		{PreToolUse, "Bash", "BashOutput", false},
		{PreToolUse, "Edit|Write", "Write", true},
		{PreToolUse, "Edit|Write", "MultiEdit", false},
		{PreToolUse, "Read|Edit|Write", "Read", true},
		{PreToolUse, "", "Anything", true},
		{PreToolUse, "*", "Anything", true},
		{PreToolUse, "Notebook.*", "NotebookEdit", true},
		{PreToolUse, "Notebook.*", "Bash", false},
		{PreToolUse, "mcp__memory__.*", "mcp__memory__create_entities", true},
		{PreToolUse, "mcp__memory__.*", "mcp__github__search", false},
		{PreToolUse, "mcp__github__search", "mcp__github__search", true},
		{PreToolUse, "mcp__github__search", "mcp__github__search_code", false},
		{PreToolUse, "mcp__.*__write.*", "mcp__fs__write_file", true},
		{PostToolUse, "^(Edit|Write)$", "Write", true},
		{PostToolUse, "^(Edit|Write)$", "MultiEdit", false},
		{PostToolUseFailure, "Bash", "Bash", true},
		{SessionStart, "startup", "startup", true},
		{SessionStart, "startup", "resume", false},
		{SessionStart, "resume|compact", "compact", true},
		{PreCompact, "auto", "manual", false},
		{Notification, "idle_prompt", "idle_prompt", true},
		{SessionEnd, "clear", "logout", false},
		// Events without matchers ignore one.
		{Stop, "Bash", "", true},
		{UserPromptSubmit, "nothing", "", true},
		{SubagentStop, "x", "", true},
	} {
		if got := Matches(c.event, c.matcher, c.value); got != c.want {
			t.Errorf("Matches(%s, %q, %q) = %v, want %v", c.event, c.matcher, c.value, got, c.want)
		}
	}
}

func TestParseIfAndAsync(t *testing.T) {
	cfg, err := Parse([]byte(`{"hooks": {
	  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "g", "if": "Bash(git commit:*)", "async": true}]}],
	  "PostToolUse": [{"hooks": [{"type": "command", "command": "p", "asyncRewake": true}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "s", "if": "Bash(ls)"}]}]
	}}`), SourceUser, "settings.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Hooks) != 3 {
		t.Fatalf("hooks = %+v", cfg.Hooks)
	}
	for _, h := range cfg.Hooks {
		switch h.Command {
		case "g":
			if h.Async || h.If != "Bash(git commit:*)" {
				t.Errorf("guard = %+v: a guard never runs async, and keeps its if", h)
			}
		case "p":
			if !h.Async || !h.Rewake {
				t.Errorf("asyncRewake hook = %+v, want async and rewake", h)
			}
		case "s":
			if h.If != "" {
				t.Errorf("Stop hook = %+v: if is read on tool events only", h)
			}
		}
	}
	w := strings.Join(cfg.Warnings, "\n")
	if !strings.Contains(w, "a guard never runs async") || strings.Contains(w, "asyncRewake") {
		t.Errorf("warnings %q: want the guard's, and none for asyncRewake, which ralph runs", w)
	}
}
