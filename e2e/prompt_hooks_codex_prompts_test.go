package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 90's items 5, 7 and 9 from outside: codex's prompts sent as codex
// sends them, Claude Code's prompt hooks (type "prompt") answered by the
// stand-in model, and `ralph hooks` showing each hook's "if". The prompt
// hooks are written in the layout of Claude Code's hooks reference and of
// the official plugins' hooks/hooks.json ({"type": "prompt", "prompt":
// "… $ARGUMENTS"}); the codex prompt in codex's docs/prompts.md layout
// (~/.codex/prompts/NAME.md, front matter description and argument-hint).

// isPromptHook reports whether r is a prompt hook's request, not the
// agent's: ralph's system text for one names it.
func isPromptHook(r llmtest.RecordedRequest) bool {
	return strings.Contains(systemText(r), "You decide one hook")
}

// TestEco3StopPromptHookKeepsGoingOnce: a Stop prompt hook answered
// {"ok": false, "reason": …} keeps the session going with the reason;
// answered {"ok": true} the next time, it lets the session end. Both
// requests count in the run's usage, and each is a decision in the log.
func TestEco3StopPromptHookKeepsGoingOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := 0
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		if isPromptHook(r) {
			mu.Lock()
			defer mu.Unlock()
			asked++
			if asked == 1 {
				return llmtest.Response{Text: `{"ok": false, "reason": "Run the tests before you stop."}`, Usage: &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 100}}
			}
			return llmtest.Response{Text: `{"ok": true}`, Usage: &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 100}}
		}
		return llmtest.Response{Text: "All done.", Usage: &llmtest.Usage{PromptTokens: 10, CompletionTokens: 1}}
	})
	proj, home := attackLayout(t)
	personHooks(t, home, `{"Stop":[{"hooks":[{"type":"prompt","prompt":"Did the agent run the tests? $ARGUMENTS","timeout":30}]}]}`)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--json", "fix the bug")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var agent []llmtest.RecordedRequest
	for _, req := range srv.Requests() {
		if !isPromptHook(req) {
			agent = append(agent, req)
		}
	}
	if asked != 2 || len(agent) != 2 {
		t.Fatalf("want two hook requests and two of the agent's, got %d and %d", asked, len(agent))
	}
	if !sentToModel(srv, "Run the tests before you stop.") {
		t.Error("the hook's reason did not reach the agent")
	}
	for _, req := range srv.Requests() {
		if isPromptHook(req) {
			user := req.Request.Messages[len(req.Request.Messages)-1].Content
			if !strings.Contains(user, "<hook_input>") || !strings.Contains(user, `"hook_event_name":"Stop"`) || len(req.Request.Tools) != 0 {
				t.Errorf("the hook's request is not the question with its input fenced and no tools: %q", user)
			}
		}
	}
	usage, _ := resultLine(t, r.stdout)["usage"].(map[string]any)
	if in, _ := usage["input_tokens"].(float64); in != 2020 {
		t.Errorf("the run's input tokens are %v, want 2020 (the hooks' 2000 counted)", usage["input_tokens"])
	}
	if d := readFile(t, filepath.Join(sessionDir(t, proj), "decisions.jsonl")); strings.Count(d, `"prompt_hook"`) != 2 {
		t.Errorf("decisions.jsonl does not log both hook requests:\n%s", d)
	}
}

// TestEco3PreToolUsePromptHookBlocks: a PreToolUse prompt hook on Bash
// answered ok false refuses the command, even under -y: it never runs,
// and the model reads the reason as the call's result.
func TestEco3PreToolUsePromptHookBlocks(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		switch {
		case isPromptHook(r):
			return llmtest.Response{Text: "```json\n{\"ok\": false, \"reason\": \"Touching files is not allowed here.\"}\n```"}
		case msgs[len(msgs)-1].Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"touch ran-marker"}`}}}
		}
		return llmtest.Response{Text: "done"}
	})
	proj, home := attackLayout(t)
	personHooks(t, home, `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"prompt","prompt":"Is this command safe? $ARGUMENTS"}]}]}`)
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "-y", "--no-wait", "touch a file")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(proj, "ran-marker")); err == nil {
		t.Fatal("the command the prompt hook refused ran")
	}
	results := hookedResults(srv)
	if len(results) != 1 || !strings.Contains(results[0], "Touching files is not allowed here.") {
		t.Fatalf("the model did not read the hook's reason: %q", results)
	}
}

// TestEco3HooksListShowsIf: two hooks of one matcher and command that
// differ by their "if" are listed with it; a prompt hook is listed by
// its prompt.
func TestEco3HooksListShowsIf(t *testing.T) {
	t.Parallel()
	proj, home := attackLayout(t)
	personHooks(t, home, `{"PreToolUse":[{"matcher":"Bash","hooks":[`+
		`{"type":"command","command":"guard.sh","if":"Bash(git commit:*)"},`+
		`{"type":"command","command":"guard.sh","if":"Bash(git push:*)"},`+
		`{"type":"prompt","prompt":"Is it safe?"}]}]}`)
	r := ralph(t, proj, attackEnv(t, home, "http://127.0.0.1:9", nil), nil, "hooks")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"PreToolUse Bash if Bash(git commit:*): guard.sh", "PreToolUse Bash if Bash(git push:*): guard.sh", "PreToolUse Bash: prompt: Is it safe?"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("ralph hooks lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestEco3CodexPromptIsText: a codex prompt (~/.codex/prompts/NAME.md,
// codex's documented layout) with $1, $$, a !`…` line and Claude Code's
// allowed-tools is sent as codex sends it, /prompts:NAME and /NAME
// alike: $1 filled, $$ kept, the line text that never runs, all tools
// still offered; and without -y it is sent all the same.
func TestEco3CodexPromptIsText(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(llmtest.RecordedRequest) llmtest.Response { return llmtest.Response{Text: "ok"} })
	proj, home := attackLayout(t)
	if err := os.MkdirAll(filepath.Join(home, ".codex", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(home, ".codex", "prompts", "price.md"),
		"---\ndescription: Price an item\nargument-hint: ITEM\nallowed-tools: Bash(touch:*)\n---\nPrice $1 in $$ and see !`touch ran-marker`.\n")
	for i, line := range []string{"/prompts:price widget", "/price gadget"} {
		args := []string{line}
		if i == 0 {
			args = []string{"-y", line}
		}
		r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", line, r.code, r.stderr)
		}
		word := strings.Fields(line)[1]
		reqs := srv.Requests()
		last := reqs[len(reqs)-1]
		if !sentToModel(srv, "Price "+word+" in $$ and see !`touch ran-marker`.") {
			t.Errorf("%s: the prompt was not sent as text", line)
		}
		if names := toolNames(last); len(names) < 3 {
			t.Errorf("%s: allowed-tools narrowed the tools to %v", line, names)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "ran-marker")); err == nil {
		t.Fatal("the prompt's !`…` line ran")
	}
}

// TestEco3AgentDefinitionWebSearch: agent definitions of the person's
// (~/.claude/agents, Claude Code's layout) naming WebSearch start with no
// warning; with web_search on, the one that names it is offered the
// provider's search and the one whose tools leave it out is not; with
// web_search off, the one that names it goes without, said once when it
// starts.
func TestEco3AgentDefinitionWebSearch(t *testing.T) {
	t.Parallel()
	spawn := func(agent string) string {
		return `{"tool_calls":[{"name":"Task","arguments":` + quoteJSON(`{"description":"look it up","prompt":"find the release","subagent_type":"`+agent+`"}`) + `}]}`
	}
	script := spawn("researcher") + `,{"text":"Go 1.25."},` + spawn("reader") + `,{"text":"read."},{"text":"done"}`
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("web_search=%v", on), func(t *testing.T) {
			t.Parallel()
			eco3DefinitionSearch(t, on, script)
		})
	}
}

// eco3DefinitionSearch is one run of TestEco3AgentDefinitionWebSearch,
// with web_search on or off, in a home of its own.
func eco3DefinitionSearch(t *testing.T, on bool, script string) {
	dir := t.TempDir()
	env := anthropicEnv(t)
	home := envValue(env, "HOME")
	for name, tools := range map[string]string{"researcher": "Read, WebSearch", "reader": "Read"} {
		if err := os.MkdirAll(filepath.Join(home, ".claude", "agents"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFileT(t, filepath.Join(home, ".claude", "agents", name+".md"),
			"---\nname: "+name+"\ndescription: Looks things up\ntools: "+tools+"\n---\nYou look things up.\n")
	}
	if on {
		env = withUserConfig(t, env, "web_search = true\n")
	}
	srv := anthropicServer(t, script)
	r := anthropicRun(t, dir, env, srv, "-y", "find the latest Go release")
	sent := messagesSent(t, srv, false)
	if len(sent) != 5 {
		t.Fatalf("web_search %v: %d requests, want 5\n%s", on, len(sent), r.stderr)
	}
	if strings.Contains(r.stderr, "ralph does not have") {
		t.Errorf("web_search %v: a definition naming WebSearch was warned about:\n%s", on, r.stderr)
	}
	if got := offersSearch(t, sent[1]); got != on {
		t.Errorf("web_search %v: the researcher is offered the search: %v", on, got)
	}
	if offersSearch(t, sent[3]) {
		t.Errorf("web_search %v: the reader, whose tools leave WebSearch out, is offered the search", on)
	}
	said := strings.Count(r.stderr, "names WebSearch, which it goes without: web_search is off")
	if on && said != 0 || !on && said != 1 {
		t.Errorf("web_search %v: said %d times that the researcher goes without:\n%s", on, said, r.stderr)
	}
}

// eco3Notebook is a small Jupyter notebook in nbformat 4's layout, as
// Jupyter writes it: a markdown cell and a code cell with its output.
const eco3Notebook = `{
 "cells": [
  {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Sales\n", "NOTEBOOK-MARKDOWN-CELL"]},
  {"cell_type": "code", "execution_count": 1, "id": "sum", "metadata": {},
   "outputs": [{"name": "stdout", "output_type": "stream", "text": ["NOTEBOOK-OUTPUT 42\n"]}],
   "source": ["print('NOTEBOOK-CODE-CELL', 40 + 2)"]}
 ],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
`

// TestEco3AgentDefinitionNotebookTools: a definition naming Claude Code's
// NotebookRead and NotebookEdit starts with no warning, its agent gets
// read_file and edit_file, and NotebookRead's read_file reads a real
// notebook: its cells, sources and outputs reach the model.
func TestEco3AgentDefinitionNotebookTools(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		child := strings.Contains(systemText(r), "child agent of ralph")
		switch {
		case child && last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"sales.ipynb"}`}}}
		case child:
			return llmtest.Response{Text: "The notebook prints 42."}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "spawn_agent", Arguments: `{"task":"read sales.ipynb","agent":"analyst"}`}}}
		}
		return llmtest.Response{Text: "All done."}
	})
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	home := envValue(env, "HOME")
	if err := os.MkdirAll(filepath.Join(home, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(home, ".claude", "agents", "analyst.md"),
		"---\nname: analyst\ndescription: Reads and fixes Jupyter notebooks\ntools: NotebookRead, NotebookEdit\n---\nYou work on notebooks.\n")
	writeFileT(t, filepath.Join(dir, "sales.ipynb"), eco3Notebook)
	r := ralph(t, dir, env, nil, "look at the notebook")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "ralph does not have") {
		t.Errorf("the notebook tools were warned about:\n%s", r.stderr)
	}
	var child []llmtest.RecordedRequest
	for _, req := range srv.Requests() {
		if strings.Contains(systemText(req), "child agent of ralph") {
			child = append(child, req)
		}
	}
	if len(child) != 2 {
		t.Fatalf("%d requests of the child, want 2\n%s", len(child), r.stderr)
	}
	if got := toolNames(child[0]); !slices.Equal(got, []string{"edit_file", "read_file"}) {
		t.Errorf("the analyst was offered %v, want edit_file and read_file", got)
	}
	read := child[1].Request.Messages[len(child[1].Request.Messages)-1].Content
	for _, want := range []string{"NOTEBOOK-MARKDOWN-CELL", "NOTEBOOK-CODE-CELL", "NOTEBOOK-OUTPUT 42", `"cell_type": "code"`} {
		if !strings.Contains(read, want) {
			t.Errorf("NotebookRead's read of the notebook lacks %q:\n%s", want, read)
		}
	}
}
