package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Agent definitions written for Claude Code (.claude/agents/*.md and
// ~/.claude/agents/*.md): our own small examples, in Claude Code's
// documented layout.
const (
	bugHunterDef = "---\nname: bug-hunter\ndescription: Finds bugs in changed code and reports them with line numbers\ntools: Read, Grep\nmodel: sonnet\n---\nYou hunt bugs. BUG-HUNTER-PROMPT: report each bug with its file and line, and change nothing.\n"
	docWriterDef = "---\nname: doc-writer\ndescription: Writes the documentation of a package\n---\nYou write documentation. DOC-WRITER-PROMPT.\n"
)

// definitionProject is a project with the bug hunter and a person with
// the doc writer, and the environment to run ralph in it.
func definitionProject(t *testing.T, url string) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	env = cleanEnv(t, "OPENAI_BASE_URL="+url)
	home := envValue(env, "HOME")
	for path, body := range map[string]string{
		filepath.Join(dir, ".claude/agents/bug-hunter.md"):  bugHunterDef,
		filepath.Join(home, ".claude/agents/doc-writer.md"): docWriterDef,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFileT(t, path, body)
	}
	return dir, env
}

// answering is the stand-in model answering each request with fn; its
// Requests are what ralph sent.
func answering(t *testing.T, fn func(llmtest.RecordedRequest) llmtest.Response) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServerFunc(fn)
	t.Cleanup(srv.Close)
	return srv
}

// toolNames are the names of the tools a request offered, sorted.
func toolNames(r llmtest.RecordedRequest) []string {
	names := offered(r)
	slices.Sort(names)
	return names
}

// systemText is a request's system prompt, "" when it has none (a
// request of any agent may be looked at).
func systemText(r llmtest.RecordedRequest) string {
	if len(r.Request.Messages) > 0 && r.Request.Messages[0].Role == "system" {
		return r.Request.Messages[0].Content
	}
	return ""
}

// TestSpawnAgentNamesADefinition: the main agent's system prompt lists
// the definitions by name and description only; spawn_agent naming an
// unknown one is told the names there are; naming the project's bug
// hunter gives the child that definition's prompt and only its tools
// (Read and Grep: read_file and search), and its model alias is said
// once to be the parent's model.
func TestSpawnAgentNamesADefinition(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		switch {
		case strings.Contains(systemText(r), "child agent of ralph"):
			return llmtest.Response{Text: "No bugs: checked with read_file."}
		case last.Role == "user":
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "spawn_agent", Arguments: `{"task":"find bugs in main.go","agent":"nobody"}`}}}
		case last.Role == "tool" && strings.Contains(last.Content, "no agent definition"):
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "spawn_agent", Arguments: `{"task":"find bugs in main.go","agent":"bug-hunter"}`}}}
		}
		return llmtest.Response{Text: "All done."}
	})
	dir, env := definitionProject(t, srv.URL)
	r := ralph(t, dir, env, nil, "hunt the bugs")
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
	if len(main) != 3 || len(child) != 1 {
		t.Fatalf("%d requests of the main agent, %d of children; want 3 and 1\n%s", len(main), len(child), r.stderr)
	}
	sys := systemText(main[0])
	for _, want := range []string{"- bug-hunter: Finds bugs in changed code and reports them with line numbers", "- doc-writer: Writes the documentation of a package"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt does not list %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "BUG-HUNTER-PROMPT") || strings.Contains(sys, "DOC-WRITER-PROMPT") {
		t.Errorf("a definition's prompt reached the main agent:\n%s", sys)
	}
	if told := main[1].Request.Messages[len(main[1].Request.Messages)-1].Content; !strings.Contains(told, "the definitions are: bug-hunter, doc-writer") {
		t.Errorf("spawn_agent with an unknown definition was told %q", told)
	}
	csys := systemText(child[0])
	if !strings.Contains(csys, "BUG-HUNTER-PROMPT: report each bug") || strings.Contains(csys, "DOC-WRITER-PROMPT") {
		t.Errorf("the child's system prompt lacks its definition's prompt:\n%s", csys)
	}
	if got := toolNames(child[0]); !slices.Equal(got, []string{"read_file", "search"}) {
		t.Errorf("the child was offered %v, want only the definition's read_file and search", got)
	}
	if child[0].Request.Model != main[0].Request.Model {
		t.Errorf("the child asked model %q, the parent %q: an alias is the parent's model", child[0].Request.Model, main[0].Request.Model)
	}
	if !strings.Contains(r.stderr, "asks for model sonnet, an alias the session's provider serves no model for") {
		t.Errorf("the alias was not said:\n%s", r.stderr)
	}
}

// TestAgentFlagRunsADefinition: ralph --agent def:NAME runs a one-shot
// as the definition (its prompt, its tools, its model id); a name no
// definition has is refused in one sentence before any request; ralph
// run --agent def:NAME works a task with a child that follows it and
// still finishes with complete_task.
func TestAgentFlagRunsADefinition(t *testing.T) {
	t.Parallel()
	srv := answering(t, func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if strings.Contains(systemText(r), "child agent of ralph") && msgs[len(msgs)-1].Role == "user" {
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: `{"id":"t1","summary":"reviewed"}`}}}
		}
		return llmtest.Response{Text: "Reviewed."}
	})
	dir, env := definitionProject(t, srv.URL)
	// A concrete model id is the child's model.
	writeFileT(t, filepath.Join(dir, ".claude/agents/bug-hunter.md"), strings.Replace(bugHunterDef, "model: sonnet", "model: hunter-model-7", 1))

	r := ralph(t, dir, env, nil, "--agent", "def:nobody", "look for bugs")
	if r.code != 2 || !strings.Contains(r.stderr, `no agent definition called "nobody"; the definitions are: bug-hunter, doc-writer`) || len(srv.Requests()) != 0 {
		t.Fatalf("--agent def:nobody: exit %d, %d requests\n%s", r.code, len(srv.Requests()), r.stderr)
	}
	if r := ralph(t, dir, env, nil, "--agent", "codex", "look for bugs"); r.code != 2 || !strings.Contains(r.stderr, "works tasks with ralph run --agent") {
		t.Fatalf("--agent codex on a one-shot: exit %d\n%s", r.code, r.stderr)
	}

	r = ralph(t, dir, env, nil, "--agent", "def:bug-hunter", "look for bugs")
	reqs := srv.Requests()
	if r.code != 0 || len(reqs) != 1 {
		t.Fatalf("--agent def:bug-hunter: exit %d, %d requests\n%s\n%s", r.code, len(reqs), r.stdout, r.stderr)
	}
	one := reqs[0]
	if !strings.Contains(systemText(one), "BUG-HUNTER-PROMPT") {
		t.Errorf("the one-shot's system prompt lacks the definition's prompt:\n%s", systemText(one))
	}
	if got := toolNames(one); !slices.Equal(got, []string{"read_file", "search"}) {
		t.Errorf("the one-shot was offered %v, want read_file and search", got)
	}
	if one.Request.Model != "hunter-model-7" {
		t.Errorf("the one-shot asked model %q, want the definition's hunter-model-7", one.Request.Model)
	}

	writeTasks(t, dir, "review main.go")
	r = ralph(t, dir, env, nil, "--json", "run", "--agent", "bug-hunter", "--retries", "0")
	if r.code != 0 {
		t.Fatalf("ralph run --agent bug-hunter (a bare name): exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs = srv.Requests()[1:]
	if len(reqs) == 0 || !strings.Contains(systemText(reqs[0]), "BUG-HUNTER-PROMPT") {
		t.Fatalf("the task's child did not get the definition's prompt: %d requests", len(reqs))
	}
	if got := toolNames(reqs[0]); !slices.Equal(got, []string{"complete_task", "read_file", "search"}) {
		t.Errorf("the task's child was offered %v, want the definition's tools and complete_task", got)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "RALPH_TASKS.md")), "- [x] review main.go") {
		t.Errorf("the task is not done:\n%s", readFile(t, filepath.Join(dir, "RALPH_TASKS.md")))
	}
}

// TestAgentDefinitionLinkedOutIsRefused: a project's definition that is
// a link to a file of the person's, and a person's definition linked out
// of ~/.claude, are each refused in one sentence, and what they link to
// never reaches the model endpoint.
func TestAgentDefinitionLinkedOutIsRefused(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"defs-linked","loop":true,"responses":[{"text":"ok"}]}`)
	proj, home := attackLayout(t)
	const secret = "SECRET-DEF-5c1e"
	writeFileT(t, filepath.Join(home, "notes.md"), "---\nname: leak\ndescription: "+secret+"\n---\n"+secret+"\n")
	for _, d := range []string{filepath.Join(proj, ".claude/agents"), filepath.Join(home, ".claude/agents")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(home, "notes.md"), filepath.Join(d, "leak.md")); err != nil {
			t.Fatal(err)
		}
	}
	r := ralph(t, proj, attackEnv(t, home, srv.URL, nil), nil, "hi")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{".claude/agents/leak.md is not used: it is a link out of its directory, which ralph does not follow.",
		"~/.claude/agents/leak.md is not used: it is a link out of its directory, which ralph does not follow."} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, req := range srv.Requests() {
		if strings.Contains(string(req.Body), secret) {
			t.Fatalf("a linked-out definition reached the endpoint:\n%s", req.Body)
		}
	}
}
