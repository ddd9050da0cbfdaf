package eventwords

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// eventRows is every event kind as a person reads it, in every face: the
// chat shell, the one-shot progress and -v, `ralph watch` and `ralph logs`
// print EventLine's line (their own tests check that they do).
var eventRows = []struct {
	ev   event.Event
	want string // "" when the kind is no line of its own
	err  bool
}{
	{ev: event.Event{Type: event.SessionStarted, Model: "m1"}, want: "● run started · model m1"},
	{ev: event.Event{Type: event.TurnStarted, Turn: 3}, want: "· turn 3"},
	{ev: event.Event{Type: event.TextDelta, Text: "Hel"}},
	{ev: event.Event{Type: event.ThinkingDelta, Text: "hmm"}},
	{ev: event.Event{Type: event.Thinking, Text: "first\nI read"}, want: "∴ thought: first I read"},
	{ev: event.Event{Type: event.Assistant, AgentID: "agent-1.1", Text: "done\nmore"}, want: "[agent-1.1] │ done …"},
	{ev: event.Event{Type: event.AssistantCut, Text: "half"}, want: "│ cut short: half"},
	{ev: event.Event{Type: event.ToolCall, ToolName: "run_command", ToolArgs: json.RawMessage(`{"command":"make"}`)}, want: "• running `make`"},
	{ev: event.Event{Type: event.ToolResult, Output: "ok\nrest"}, want: "  ↳ ok …"},
	{ev: event.Event{Type: event.ToolResult, Output: "no such file\x1b[2J", IsError: true}, want: "  ✗ no such file", err: true},
	{ev: event.Event{Type: event.UserMessage, Text: "make it\nwork"}, want: "› make it work"},
	{ev: event.Event{Type: event.UserMessage, Text: "also\nthis", Priority: "normal"}, want: "→ delivered: also this"},
	{ev: event.Event{Type: event.UserMessage, AgentID: "agent-1.1", Text: "write the parser\nin Go"}, want: ""}, // its agent_spawned line said it
	{ev: event.Event{Type: event.MessageRefused, Text: "HTTP 400: too long", Output: "a long\npaste"},
		want: "! set aside, refused by the endpoint (HTTP 400: too long): a long paste", err: true},
	{ev: event.Event{Type: event.ConversationCompacted, Text: "compacted the conversation: about 900 tokens to 120",
		Compaction: &conversation.Compaction{Cause: conversation.CompactedByCommand}}, want: "◆ compacted the conversation: about 900 tokens to 120"},
	{ev: event.Event{Type: event.ConversationCompacted, Text: "the conversation was longer than the model accepts: compacted it",
		Compaction: &conversation.Compaction{Cause: conversation.CompactedForContextLimit}}, want: "↻ the conversation was longer than the model accepts: compacted it"},
	{ev: event.Event{Type: event.Retry, Retry: &event.RetryInfo{Attempt: 2, Wait: 1500 * time.Millisecond, Reason: "HTTP 503"}},
		want: "↻ attempt 2 failed: HTTP 503; retrying in 1.5s"},
	{ev: event.Event{Type: event.Waiting, SilentMS: 12000}, want: "… waiting for the model — no data for 12s"},
	{ev: event.Event{Type: event.Fallback, Fallback: &event.FallbackInfo{From: "claude-opus-4-1", To: "claude-sonnet-4-5", Reason: "HTTP 529"}},
		want: "↻ claude-opus-4-1 failed (HTTP 529); this turn goes to the fallback model claude-sonnet-4-5"},
	{ev: event.Event{Type: event.Fallback, Fallback: &event.FallbackInfo{From: "claude-opus-4-1", To: "gemini-2.5-pro", Reason: "HTTP 503",
		Note: "gemini-2.5-pro is gemini's, not anthropic's: the prompt cache and the thinking signatures of this session do not carry over to it"}},
		want: "↻ claude-opus-4-1 failed (HTTP 503); this turn goes to the fallback model gemini-2.5-pro; gemini-2.5-pro is gemini's, not anthropic's: the prompt cache and the thinking signatures of this session do not carry over to it"},
	{ev: event.Event{Type: event.AgentSpawned, AgentID: "agent-1.1", Text: "write the parser\nin Go"}, want: "↗ agent-1.1 started: write the parser …"},
	{ev: event.Event{Type: event.AgentFinished, AgentID: "agent-1.1"}, want: "↘ agent-1.1 finished"},
	{ev: event.Event{Type: event.AgentFinished, AgentID: "agent-1.1", IsError: true, Text: "boom"}, want: "↘ agent-1.1 failed: boom", err: true},
	{ev: event.Event{Type: event.TaskChanged, Text: "t1 in_progress", Output: "Parse"}, want: "▶ task t1: Parse (in progress)"},
	{ev: event.Event{Type: event.TaskChanged, Text: "t1 failed", Output: "Parse"}, want: "✗ task t1: Parse (failed)", err: true},
	{ev: event.Event{Type: event.Verified, Text: "go test ./...", Task: "t1",
		TaskAttempt: &event.TaskAttempt{Number: 1, Verify: &event.VerifyRun{OK: true, DurationMS: 1200}}}, want: "✓ verify passed: `go test ./...` (1.2s) · task t1"},
	{ev: event.Event{Type: event.Verified, Text: "make lint", Task: "t1", IsError: true,
		TaskAttempt: &event.TaskAttempt{Number: 1, Verify: &event.VerifyRun{DurationMS: 300}}}, want: "✗ verify failed: `make lint` (300ms) · task t1", err: true},
	{ev: event.Event{Type: event.FilesChanged, Text: "1 file changed"}, want: "± 1 file changed"},
	{ev: event.Event{Type: event.StateSaved}, want: "· state saved"},
	// The coordinator's own text is the same words: said once (issue 68).
	{ev: event.Event{Type: event.StateSaved, Text: "state saved"}, want: "· state saved"},
	{ev: event.Event{Type: event.Interrupted, Text: "Ctrl-C"}, want: "■ interrupted: Ctrl-C"},
	{ev: event.Event{Type: event.Error, Text: "model gone"}, want: "✗ model gone", err: true},
	{ev: event.Event{Type: event.Warning, Text: "prompt cut"}, want: "! warning: prompt cut", err: true},
	{ev: event.Event{Type: event.RunResult, Result: &event.Result{Subtype: "success", NumTurns: 1, CostUSD: ptr(0.00012)}},
		want: "■ success after 1 turn, tokens 0 in / 0 out, cost $0.00012"},
	{ev: event.Event{Type: event.Question, Question: &memory.Question{ID: 4, Text: "allow?"}}, want: "? #4 allow?"},
	{ev: event.Event{Type: event.Answered, Question: &memory.Question{ID: 4}, Text: "y", Output: "terminal"}, want: "✓ answered #4 y (terminal)"},
	{ev: event.Event{Type: event.LimitWait, Text: "waiting for the rate limit until 14:05"}, want: "⏸ waiting for the rate limit until 14:05"},
	{ev: event.Event{Type: event.Breaker, Text: "circuit breaker open", IsError: true}, want: "⏸ circuit breaker open", err: true},
	{ev: event.Event{Type: event.Decision, Decision: &memory.DecisionRecord{Kind: "retry", Detail: "t1", Reason: "tests failed"}},
		want: "◆ retry: t1 — because tests failed"},
	{ev: event.Event{Type: event.TodoUpdated, Todo: &memory.TodoList{Items: []memory.TodoItem{{Step: "read", Status: "completed"},
		{Step: "fix\x1b[2J", Status: "in_progress"}, {Step: "test", Status: "pending"}}}}, want: "☰ todo 1/3: ☑ read · ◐ fix · ☐ test"},
	{ev: event.Event{Type: event.WebSearch, Search: &event.SearchInfo{Query: "go 1.26\x1b[2J release", Results: 5}},
		want: `• web_search "go 1.26 release" · 5 results`},
}

func ptr[T any](v T) *T { return &v }

// TestEventLines renders every event kind once, and fails when a kind is
// declared in coordinator/event/event.go without a row here: a new kind must
// be given its words here, never in a face.
func TestEventLines(t *testing.T) {
	seen := map[event.Type]bool{}
	for _, r := range eventRows {
		seen[r.ev.Type] = true
		l, ok := EventLine(r.ev)
		if ok != (r.want != "") {
			t.Errorf("%s: ok = %v", r.ev.Type, ok)
			continue
		}
		if got := l.String(); ok && got != r.want {
			t.Errorf("%s: %q, want %q", r.ev.Type, got, r.want)
		}
		if ok && (l.Style == StyleError) != r.err {
			t.Errorf("%s: style %v", r.ev.Type, l.Style)
		}
	}
	for _, kind := range declaredKinds(t) {
		if !seen[kind] {
			t.Errorf("event kind %s has no row in eventRows: give it its line in EventLine", kind)
		}
	}
}

// declaredKinds reads the Type constants from the event package's
// source, so a kind added there is found without anyone listing it.
func declaredKinds(t *testing.T) []event.Type {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../coordinator/event/event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []event.Type
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Type" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok {
					k, _ := strconv.Unquote(lit.Value)
					kinds = append(kinds, event.Type(k))
				}
			}
		}
	}
	if len(kinds) < 20 {
		t.Fatalf("found %d event kinds in coordinator/event/event.go; has the declaration moved?", len(kinds))
	}
	return kinds
}

// TestWaitingOldRecords: a waiting event recorded before the event
// carried its limit has its words in Text, and a ralph reading that
// record shows them.
func TestWaitingOldRecords(t *testing.T) {
	old := event.Event{Type: event.Waiting, SilentMS: 12000, Text: "waiting for the model — no data for 12 s"}
	if got := Waiting(old); got != old.Text {
		t.Errorf("old record: %q", got)
	}
	local := event.Event{Type: event.Waiting, SilentMS: 12000, WaitLimitMS: 600000, ModelLoaded: true}
	if got, want := Waiting(local), "waiting for the model — no data for 12s; Ollama has the model loaded and is reading the prompt, so ralph waits up to 10m00s"; got != want {
		t.Errorf("local: %q, want %q", got, want)
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {1234 * time.Microsecond, "1ms"}, {1500 * time.Millisecond, "1.5s"}, {42 * time.Second, "42s"},
		{6*time.Second + 140*time.Millisecond, "6.1s"}, {3*time.Minute + 5*time.Second, "3m05s"},
		{62 * time.Minute, "1h02m"}, {59970 * time.Millisecond, "1m00s"}, {999700 * time.Microsecond, "1s"}, {time.Hour - 200*time.Millisecond, "1h00m"}, {83*time.Minute + 40*time.Second, "1h24m"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %s, want %s", c.d, got, c.want)
		}
	}
}

func TestThinking(t *testing.T) {
	var th Thinking
	if _, ok := th.Fold(); ok {
		t.Error("no reasoning, yet a line")
	}
	if got := th.Add("I should\nread main.go"); got != "thinking: I should read main.go" {
		t.Errorf("tail %q", got)
	}
	l, ok := th.Fold()
	if !ok || l.Glyph != GlyphThought || !regexpMatch(`^thought for [0-9.]+m?s: I should read main.go$`, l.Text) {
		t.Errorf("fold %q", l.Text)
	}
	if _, ok := th.Fold(); ok {
		t.Error("folded twice")
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
