package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Agent definitions in subfolders (issue 69): Claude Code reads every
// *.md below .claude/agents and ~/.claude/agents (2.1.197 lists them
// with ripgrep --files --glob '*.md') and names each by its front
// matter's name, whatever folder it lies in. The real material is four
// definitions of VoltAgent/awesome-claude-code-subagents, whose
// installer keeps their category folders (testdata/plugins69, ORIGIN.md).

// voltAgentDir is the copy of the collection in testdata.
func voltAgentDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "plugins69", "VoltAgent-awesome-claude-code-subagents")
}

// TestNestedAgentDefinitionsOfARealCollection: the collection's
// categories/ tree copied as .claude/agents/ (its folders kept) and a
// definition in .claude/agents/sub/x.md are all listed to the model by
// their front matter's names, spawn_agent can name the one two folders
// down, and the tools they name that ralph lacks (WebFetch, WebSearch)
// are said in one line per definition.
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
	for _, name := range []string{"design-bridge", "documentation-engineer"} {
		want := "names WebFetch, WebSearch, which ralph does not have, so agent " + name + " goes without"
		if n := strings.Count(r.stderr, want); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", want, n, r.stderr)
		}
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
