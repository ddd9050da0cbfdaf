//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/fixtures"
)

// The real claude-code-hooks repository as its fixture keeps it: its
// marketplace file ("claude-code-hooks") and some of the plugins it lists
// (claude-code-hooks/ORIGIN.md in memory/fixtures).
func hooksMarketDir(t *testing.T) string { return fixtures.Path(t, "claude-code-hooks") }

// TestChatPluginInstallFromMarketplace: in a real chat (tmux), the
// README's way as Claude Code's chat takes it: /plugin marketplace add
// DIR, then /plugin install block-dangerous-commands@claude-code-hooks.
// Each says what `ralph plugin` says, and that the plugin comes with the
// next session; /plugin alone lists it, and `ralph plugin list` knows it
// too (one record). Tab completes /plugin's words; /plugin enable is one
// sentence saying ralph keeps no switch. In the next session the plugin's
// PreToolUse guard refuses the model's `rm -rf ~/`, as its README says.
func TestChatPluginInstallFromMarketplace(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	srv := inlineServer(t, toolScenario(t, "plugin-chat", [][]toolCall{
		{{"run_command", `{"command":"rm -rf ~/; echo ran > ran-marker.txt"}`}},
	}, "done"))
	extra := append([]string{"HOME=" + home, "TMPDIR=" + filepath.Join(filepath.Dir(home), "tmp"),
		"OPENAI_API_KEY=sk-e2e-pluginchat", "OPENAI_BASE_URL=" + srv.URL}, gitEnv...)
	c := startTmux(t, proj, extra, 220, 50, "chat")
	c.waitFor("the prompt", 20*time.Second, idlePrompt.MatchString)

	// A copy outside every project, as a person's own clone would lie:
	// one inside a git work tree (ralph's testdata) is the model's.
	market := filepath.Join(filepath.Dir(home), "claude-code-hooks")
	copyTree(t, hooksMarketDir(t), market)
	c.tmux("send-keys", "-l", "/plugin marketplace add "+market)
	c.tmux("send-keys", "Enter")
	c.waitFor("the marketplace added", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "Added marketplace claude-code-hooks from "+market+" (read where it lies): 20 plugins.")
	})
	// Tab completes the subcommand as Claude Code's words.
	c.tmux("send-keys", "-l", "/plugin inst")
	c.tmux("send-keys", "Tab")
	c.waitFor("install completed", 10*time.Second, func(s string) bool { return strings.Contains(s, "ralph> /plugin install") })
	c.tmux("send-keys", "-l", " block-dangerous-commands@claude-code-hooks")
	c.tmux("send-keys", "Enter")
	dir := filepath.Join(market, "plugins", "block-dangerous-commands")
	c.waitFor("the plugin installed", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "Added plugin block-dangerous-commands 1.0.0 from "+dir+": 1 hook, 0 skills, 0 commands, 0 agents.") &&
			strings.Contains(s, "takes effect when ralph starts again")
	})
	c.tmux("send-keys", "-l", "/plugin")
	c.tmux("send-keys", "Enter")
	c.waitFor("the list", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "block-dangerous-commands 1.0.0  "+dir) && strings.Contains(s, "brings 1 hook, 0 skills")
	})
	c.tmux("send-keys", "-l", "/plugin enable block-dangerous-commands")
	c.tmux("send-keys", "Enter")
	c.waitFor("enable refused", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "✗ ralph does not enable plugins: a plugin added is on in every project")
	})
	c.tmux("send-keys", "-l", "/plugin install")
	c.tmux("send-keys", "Enter")
	c.waitFor("a missing name refused", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "✗ usage: /plugin install PATH|NAME[@MARKETPLACE]")
	})
	c.tmux("send-keys", "-l", "/help")
	c.tmux("send-keys", "Enter")
	c.waitFor("/plugin in /help", 20*time.Second, func(s string) bool { return strings.Contains(s, "/plugin [install NAME@MARKETPLACE|PATH") })
	c.tmux("send-keys", "-l", "/exit")
	c.tmux("send-keys", "Enter")

	env := attackEnv(t, home, srv.URL, nil)
	if l := listPlugins(t, proj, env); len(l.Plugins) != 1 || l.Plugins[0].Name != "block-dangerous-commands" {
		t.Fatalf("ralph plugin list after /plugin install: %+v", l)
	}
	if len(srv.Requests()) != 0 {
		t.Fatalf("/plugin reached the model: %d requests", len(srv.Requests()))
	}
	r := ralph(t, proj, env, nil, "-y", "clean up my home directory")
	if r.code != 0 {
		t.Fatalf("ralph exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(proj, "ran-marker.txt")); !os.IsNotExist(err) {
		t.Fatalf("the command the plugin guards ran (%v)\nstderr:\n%s", err, r.stderr)
	}
	wantBashrc(t, home)
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want the tool's result in a second\nstderr:\n%s", len(reqs), r.stderr)
	}
	var seen string
	for _, m := range reqs[1].Request.Messages {
		if m.Role == "tool" {
			seen += m.Content
		}
	}
	if !strings.Contains(seen, "[rm-home] rm targeting home directory") {
		t.Errorf("the model did not see the plugin's reason; the tool's result:\n%s\nstderr:\n%s", seen, r.stderr)
	}
}

// TestPluginAgentsAreNamespaced: wshobson/agents' python-development
// installed from its marketplace brings its agents as Claude Code names
// them (its /agents shows plugin-name:agent-name): the model's list has
// python-development:python-pro, and spawn_agent runs it by that name and
// by its bare name, which only this plugin has; a name nobody has is the
// one sentence naming the full names.
func TestPluginAgentsAreNamespaced(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		switch {
		case strings.Contains(systemText(r), "child agent of ralph"):
			return llmtest.Response{Text: "PY-CHILD-REPORT: fine."}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{
				{Name: "spawn_agent", Arguments: `{"task":"review the Python code","agent":"python-development:python-pro"}`},
				{Name: "spawn_agent", Arguments: `{"task":"review the API","agent":"python-development-fastapi-pro"}`},
				{Name: "spawn_agent", Arguments: `{"task":"review it all","agent":"nobody"}`},
			}}
		}
		return llmtest.Response{Text: "All done."}
	})
	proj, home := attackLayout(t)
	env := attackEnv(t, home, srv.URL, []string{"RALPH_MODEL=fake-model"})
	mustRalph(t, proj, env, "92 plugins", "plugin", "marketplace", "add", wshobsonDir(t))
	mustRalph(t, proj, env, "3 agents", "plugin", "install", "python-development@"+wshobsonMarket)
	r := ralph(t, proj, env, nil, "review the code")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var main, child []llmtest.RecordedRequest
	for _, req := range srv.Requests() {
		if strings.Contains(systemText(req), "child agent of ralph") {
			child = append(child, req)
		} else {
			main = append(main, req)
		}
	}
	if len(main) != 2 || len(child) != 2 {
		t.Fatalf("%d requests of the main agent, %d of children; want 2 and 2\n%s", len(main), len(child), r.stderr)
	}
	sys := systemText(main[0])
	for _, want := range []string{"- python-development:python-pro: Master Python 3.12+", "- python-development:python-development-fastapi-pro: Build high-performance async APIs",
		"- python-development:python-development-django-pro: "} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt does not list %q:\n%s", want, sys)
		}
	}
	var sawPy, sawAPI bool
	for _, c := range child {
		csys := systemText(c)
		sawPy = sawPy || strings.Contains(csys, "You are a Python expert specializing in modern Python 3.12+")
		sawAPI = sawAPI || strings.Contains(csys, "You are a FastAPI expert")
	}
	if !sawPy || !sawAPI {
		t.Errorf("the children did not follow python-pro by its full name (%v) and fastapi-pro by its bare name (%v)", sawPy, sawAPI)
	}
	got := lastToolResults(main[1])
	if strings.Count(got, "PY-CHILD-REPORT") != 2 || !strings.Contains(got, `no agent definition called "nobody"; the definitions are: python-development:python-development-django-pro, python-development:python-development-fastapi-pro, python-development:python-pro`) {
		t.Errorf("the main agent's tool results: %q", got)
	}
}

// TestAgentFlagRunsTheSessionAsTheDefinition: `ralph --agent NAME`, as
// Claude Code's `claude --agent NAME`, runs the main session as the
// definition (def: is no longer needed for a name no external CLI has):
// its prompt is in the system prompt, and its front matter's PreToolUse
// guard, once approved, refuses the main agent's own command with the
// hook's reason; without --agent the same command runs.
func TestAgentFlagRunsTheSessionAsTheDefinition(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude/agents/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, ".claude/agents/sub/guarded.md"), guardedDef)
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		if last.Role == "user" {
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"touch main-ran"}`}}}
		}
		return llmtest.Response{Text: "MAIN-GOT: " + last.Content}
	})
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "hooks", "approve"); r.code != 0 {
		t.Fatalf("ralph hooks approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r := ralph(t, dir, env, nil, "-y", "--agent", "guarded", "run things")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "main-ran")); err == nil {
		t.Errorf("the main agent's command ran past its definition's guard\n%s", r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(systemText(reqs[0]), "GUARDED-PROMPT") {
		t.Fatalf("%d requests; the first's system prompt:\n%s", len(reqs), systemText(reqs[0]))
	}
	if got := lastToolResults(reqs[1]); !strings.Contains(got, "AGENT-GUARD: this agent runs no commands") {
		t.Errorf("the model was not told the definition's hook's reason: %q\n%s", got, r.stderr)
	}
	r = ralph(t, dir, env, nil, "-y", "run things")
	if _, err := os.Stat(filepath.Join(dir, "main-ran")); r.code != 0 || err != nil {
		t.Errorf("without --agent the command did not run (exit %d, %v)\n%s", r.code, err, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "--agent", "nobody", "run things"); r.code != 2 || !strings.Contains(r.stderr, `no agent definition called "nobody"; the definitions are: guarded`) {
		t.Errorf("--agent nobody: exit %d\n%s", r.code, r.stderr)
	}
}

// TestAgentFlagFiresTheDefinitionsStopHook: a definition's Stop hook is
// read as SubagentStop, as Claude Code reads it for a subagent; run as
// the session itself (--agent), the definition's agent ends as the main
// agent, and the hook fires at that Stop, with Stop's input.
func TestAgentFlagFiresTheDefinitionsStopHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude/agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, ".claude/agents/stopper.md"), `---
name: stopper
description: Says when it ends
hooks:
  Stop:
    - hooks:
        - type: command
          command: "cat > stop-input.json"
---
You end when you are done.
`)
	srv := answering(t, func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "done"} })
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "hooks", "approve"); r.code != 0 {
		t.Fatalf("ralph hooks approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "--agent", "stopper", "finish"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var in struct {
		Event string `json:"hook_event_name"`
		Last  string `json:"last_assistant_message"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(dir, "stop-input.json"))), &in); err != nil || in.Event != "Stop" || in.Last != "done" {
		t.Fatalf("the definition's Stop hook read %+v (%v)", in, err)
	}
}
