package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/fixtures"
)

// Agent definitions in subfolders (issue 69): Claude Code reads every
// *.md below .claude/agents and ~/.claude/agents (2.1.197 lists them
// with ripgrep --files --glob '*.md') and names each by its front
// matter's name, whatever folder it lies in. The real material is four
// definitions of VoltAgent/awesome-claude-code-subagents, whose
// installer keeps their category folders (public-plugins in memory/fixtures,
// ORIGIN.md there).

// voltAgentDir is the copy of the collection among the public fixtures.
func voltAgentDir(t *testing.T) string {
	t.Helper()
	return fixtures.Path(t, "public-plugins", "VoltAgent-awesome-claude-code-subagents")
}

// TestNestedAgentDefinitionsOfARealCollection: the collection's
// categories/ tree copied as .claude/agents/ (its folders kept) and a
// definition in .claude/agents/sub/x.md are all listed to the model by
// their front matter's names, spawn_agent can name the one two folders
// down, and the Claude Code tools they name are ralph's (WebSearch is
// the provider's web_search, WebFetch is web_fetch), so no start warns
// of them; an agent that names WebSearch where the session has no search
// is told so when it starts, and none of these is started here.
func TestNestedAgentDefinitionsOfARealCollection(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		switch {
		case strings.Contains(systemText(r), "child agent of ralph"):
			return llmtest.Response{Text: "NESTED-CHILD-REPORT: the Go code is idiomatic."}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{
				{Name: "spawn_agent", Arguments: `{"task":"review the Go code","agent":"golang-pro"}`},
				{Name: "spawn_agent", Arguments: `{"task":"say hello","agent":"x-helper"}`},
			}}
		}
		return llmtest.Response{Text: "All done."}
	})
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	skillCopyDir(t, filepath.Join(voltAgentDir(t), "categories"), filepath.Join(dir, ".claude", "agents"))
	if err := os.MkdirAll(filepath.Join(dir, ".claude/agents/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, ".claude/agents/sub/x.md"), "---\nname: x-helper\ndescription: Says hello from a subfolder\ntools: Read\n---\nYou say hello. X-HELPER-PROMPT.\n")
	r := ralph(t, dir, env, nil, "review the code")
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
	for _, want := range []string{"- api-designer: Use this agent when designing new APIs", "- golang-pro: Use when building Go applications",
		"- design-bridge: ", "- documentation-engineer: ", "- x-helper: Says hello from a subfolder"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt does not list %q:\n%s", want, sys)
		}
	}
	var sawGo, sawX bool
	for _, c := range child {
		csys := systemText(c)
		sawGo = sawGo || strings.Contains(csys, "(.claude/agents/02-language-specialists/golang-pro.md)") && strings.Contains(csys, "You are a senior Go developer")
		sawX = sawX || strings.Contains(csys, "X-HELPER-PROMPT") && strings.Contains(csys, ".claude/agents/sub/x.md")
	}
	if !sawGo || !sawX {
		t.Errorf("the children did not follow golang-pro (%v) and x-helper (%v) from their subfolders", sawGo, sawX)
	}
	if got := lastToolResults(main[1]); !strings.Contains(got, "NESTED-CHILD-REPORT") {
		t.Errorf("the main agent was not given the child's report: %q", got)
	}
	if strings.Contains(r.stderr, "names WebSearch") {
		t.Errorf("a definition naming WebSearch was warned of at the start:\n%s", r.stderr)
	}
}

// lastToolResults are the tool results at the end of a request, one
// after the other.
func lastToolResults(r llmtest.RecordedRequest) string {
	var b strings.Builder
	msgs := r.Request.Messages
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == "tool"; i-- {
		b.WriteString(msgs[i].Content + "\n")
	}
	return b.String()
}

// guardedDef is a project's definition, in a subfolder, whose front
// matter's PreToolUse hook refuses every Bash command (exit 2, its
// stderr to the model), in the shape of a settings file's hooks.
const guardedDef = `---
name: guarded
description: Works without running commands
tools: Bash, Read
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "echo 'AGENT-GUARD: this agent runs no commands' >&2; exit 2"
          timeout: 30
---
You work without commands. GUARDED-PROMPT.
`

// guardedServer is the stand-in model: the main agent runs a command,
// then spawns the guarded agent, which runs one of its own and reports
// the result it got.
func guardedServer(t *testing.T) *llmtest.Server {
	return answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		if strings.Contains(systemText(r), "child agent of ralph") {
			if last.Role == "tool" {
				return llmtest.Response{Text: "CHILD-GOT: " + last.Content}
			}
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"touch child-ran"}`}}}
		}
		switch {
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"touch parent-ran"}`}}}
		case last.Role == "tool" && !strings.Contains(last.Content, "CHILD-GOT"):
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "spawn_agent", Arguments: `{"task":"run a command","agent":"guarded"}`}}}
		}
		return llmtest.Response{Text: "All done."}
	})
}

// TestAgentFrontMatterHookGuardsThatAgent: a project's definition in
// .claude/agents/sub/ whose front matter has a PreToolUse hook that
// exits 2. Before the person approves it, nobody can be asked in a
// one-shot, so the guard refuses the calls it guards (fail closed) and
// the parent's own command still runs; `ralph hooks` lists it as the
// definition's; once approved, it runs for that agent's command and
// blocks it (its stderr reaches the child), while the parent's command,
// which it does not guard, runs.
func TestAgentFrontMatterHookGuardsThatAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude/agents/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, ".claude/agents/sub/guarded.md"), guardedDef)
	// One server and one home for every run: the approval is kept in
	// the person's config directory.
	srv := guardedServer(t)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	run := func(t *testing.T) (runResult, string) {
		t.Helper()
		for _, f := range []string{"parent-ran", "child-ran"} {
			_ = os.Remove(filepath.Join(dir, f))
		}
		seen := len(srv.Requests())
		r := ralph(t, dir, env, nil, "-y", "run things")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "parent-ran")); err != nil {
			t.Errorf("the parent's command did not run: the agent's hook guards only that agent\n%s", r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "child-ran")); err == nil {
			t.Errorf("the guarded agent's command ran\n%s", r.stderr)
		}
		got := ""
		for _, req := range srv.Requests()[seen:] {
			msgs := req.Request.Messages
			if last := msgs[len(msgs)-1]; !strings.Contains(systemText(req), "child agent of ralph") && strings.Contains(last.Content, "CHILD-GOT") {
				got = last.Content
			}
		}
		return r, got
	}
	t.Run("waiting", func(t *testing.T) {
		r, got := run(t)
		if !strings.Contains(r.stderr, ".claude/agents/sub/guarded.md") || !strings.Contains(r.stderr, "refuses the calls it guards") {
			t.Errorf("the waiting hook was not said:\n%s", r.stderr)
		}
		if !strings.Contains(got, "was not approved as it is now, and nobody could be asked") {
			t.Errorf("the guarded agent's command was not refused for the waiting guard: %q", got)
		}
	})
	if r := ralph(t, dir, env, nil, "hooks"); r.code != 0 || !strings.Contains(r.stdout, ".claude/agents/sub/guarded.md") || !strings.Contains(r.stdout, "AGENT-GUARD") {
		t.Fatalf("ralph hooks does not list the definition's hook: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := ralph(t, dir, env, nil, "hooks", "approve"); r.code != 0 {
		t.Fatalf("ralph hooks approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Run("approved", func(t *testing.T) {
		r, got := run(t)
		if !strings.Contains(got, "AGENT-GUARD: this agent runs no commands") || strings.Contains(got, "not approved") {
			t.Errorf("the guarded agent was not told the hook's reason: %q\n%s", got, r.stderr)
		}
	})
}
