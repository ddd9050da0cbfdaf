package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/workers"
	"github.com/ralph-dev/ralph/workers/tools"
)

// testAgentStore records a child's conversation into the session, as the
// project does.
type testAgentStore struct {
	s  *memory.Session
	id string
}

func (a testAgentStore) AppendMessages(msgs ...conversation.Message) error {
	return a.s.AppendAgentMessages(a.id, msgs...)
}
func (a testAgentStore) AppendLog(name string, v any) error  { return a.s.AppendLog(name, v) }
func (a testAgentStore) SaveState(func(*memory.State)) error { return nil }

// twoTaskProject is a project in memory with two open tasks and a
// running session.
func twoTaskProject(t *testing.T) (afero.Fs, string, *memory.Session) {
	t.Helper()
	fs := afero.NewMemMapFs()
	const root = "/project"
	if err := afero.WriteFile(fs, filepath.Join(root, memory.TasksFile), []byte("- [ ] first task\n- [ ] second task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sess, err := memory.CreateSession(fs, root, "s1", memory.State{Status: memory.StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	return fs, root, sess
}

var taskIDRe = regexp.MustCompile(`^Your task \((t\d+) in RALPH_TASKS.md\)`)

// TestChildrenOfChatAndLoopGetTranscriptSections: children spawned by the
// model and children working the task loop each get one section of
// agents/transcript.md.
func TestChildrenOfChatAndLoopGetTranscriptSections(t *testing.T) {
	fs, root, sess := twoTaskProject(t)
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		switch {
		case strings.HasPrefix(msgs[0].Content, "You are a child agent"):
			if m := taskIDRe.FindStringSubmatch(msgs[1].Content); m != nil && last.Role == "user" {
				return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "complete_task", Arguments: fmt.Sprintf(`{"id":%q,"summary":"did it"}`, m[1])}}}
			}
			return llmtest.Response{Text: "report on " + strings.SplitN(msgs[1].Content, "\n", 2)[0]}
		case last.Role == "tool":
			return llmtest.Response{Text: "all reported"}
		}
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{
			{ID: "s1", Name: coordinator.SpawnAgentTool, Arguments: `{"task":"spawned one"}`},
			{ID: "s2", Name: coordinator.SpawnAgentTool, Arguments: `{"task":"spawned two"}`},
		}}
	})
	t.Cleanup(srv.Close)
	ts, err := tools.NewToolset(tools.Options{Approver: allowAll{}, Options: workers.Options{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	coord := coordinator.New(coordinator.Options{
		Model: llm.New(llm.Config{BaseURL: srv.URL, MaxAttempts: 1}), ModelName: "fake-model", Tools: ts, Store: sess,
		SessionID: sess.ID, System: "main",
		Children: &coordinator.Children{
			Parallel: 2, MaxTurns: 5, Tools: ts.For(tools.RoleChild),
			ToolsWith: func(role tools.Role, own ...tools.Tool) coordinator.Tools { return ts.For(role, own...) },
			Store:     func(id string) coordinator.Store { return testAgentStore{sess, id} },
		},
	})
	stop := coordinator.StartRecording(context.Background(), coord.Events(), sess, eventwords.Transcript).Stop
	if res := coord.Run(context.Background(), "spawn two"); res.Text != "all reported" {
		t.Fatalf("chat result = %+v", res)
	}
	res := Run(context.Background(), Options{
		Fs: fs, Root: root, Worker: ChildWorker(coord), Store: sess, Events: coord.Events(), SessionID: sess.ID,
	})
	if res.IsError || len(res.Done) != 2 {
		t.Fatalf("loop result = %+v", res)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, fs, filepath.Join(sess.Dir, memory.AgentsDir, "transcript.md"))
	sections := regexp.MustCompile(`(?m)^# Agent (\S+)$`).FindAllStringSubmatch(md, -1)
	ids := map[string]bool{}
	for _, s := range sections {
		ids[s[1]] = true
	}
	if len(sections) != 4 || len(ids) != 4 {
		t.Fatalf("want 4 sections, one per child, got %d (%v):\n%s", len(sections), ids, md)
	}
	for _, want := range []string{"## › spawned one\n", "## › spawned two\n", "report on spawned one",
		"\nYour task (t1 in RALPH_TASKS.md): first task\n", "### • complete_task t1\n", "↘ agent-2.3 finished"} {
		if !strings.Contains(md, want) {
			t.Errorf("agents/transcript.md lacks %q:\n%s", want, md)
		}
	}
	if main := readFile(t, fs, filepath.Join(sess.Dir, "transcript.md")); strings.Contains(main, "› spawned one") {
		t.Errorf("a child's own conversation leaked into the main transcript:\n%s", main)
	}
}
