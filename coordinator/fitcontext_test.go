package coordinator

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// conversation builds a system prompt, a task and turns of tool calls whose
// results are size bytes each, ending with a final answer.
func fitConversation(turns, size int) []conversation.Message {
	msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: "system"}, {Role: conversation.RoleUser, Content: "the task"}}
	for i := 0; i < turns; i++ {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs,
			conversation.Message{Role: conversation.RoleAssistant, Content: fmt.Sprintf("turn %d", i), ToolCalls: []conversation.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"x"}`}}},
			conversation.Message{Role: conversation.RoleTool, ToolCallID: id, Content: strings.Repeat("o", size)})
	}
	return msgs
}

// validPairs checks every tool result follows the assistant message that
// made its call, as the API requires.
func validPairs(t *testing.T, msgs []conversation.Message) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case conversation.RoleAssistant:
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case conversation.RoleTool:
			if !open[m.ToolCallID] {
				t.Fatalf("message %d: tool result %s without its call", i, m.ToolCallID)
			}
		}
	}
}

func TestFitContextUnderBudgetIsUntouched(t *testing.T) {
	msgs := fitConversation(3, 100)
	out, n := fitContext(msgs, 1_000_000)
	if n != 0 || !reflect.DeepEqual(out, msgs) {
		t.Fatal("a conversation within budget was changed")
	}
}

func TestFitContextTrimsOldToolOutputsFirst(t *testing.T) {
	msgs := fitConversation(6, 20_000)
	orig := append([]conversation.Message(nil), msgs...)
	budget := estimate(msgs) - 20_000/4
	out, n := fitContext(msgs, budget)
	if n == 0 || estimate(out) > budget {
		t.Fatalf("changed %d, estimate %d > budget %d", n, estimate(out), budget)
	}
	if !reflect.DeepEqual(msgs, orig) {
		t.Fatal("FitContext changed its input")
	}
	if len(out) != len(msgs) {
		t.Fatalf("messages were dropped (%d → %d) when trimming one output was enough", len(msgs), len(out))
	}
	if !strings.Contains(out[3].Content, "trimmed to fit") {
		t.Fatalf("the oldest tool output was not the one trimmed: %.80q", out[3].Content)
	}
	if last := out[len(out)-1]; last.Content != msgs[len(msgs)-1].Content {
		t.Fatal("the latest tool output was trimmed")
	}
	validPairs(t, out)
}

func TestFitContextDropsOldTurnsWithNote(t *testing.T) {
	msgs := fitConversation(40, 300)
	budget := 1500
	out, _ := fitContext(msgs, budget)
	if estimate(out) > budget {
		t.Fatalf("estimate %d > budget %d", estimate(out), budget)
	}
	if out[0].Content != "system" || out[1].Content != "the task" {
		t.Fatal("system prompt or task was dropped")
	}
	if !strings.Contains(out[2].Content, "earlier messages were left out") {
		t.Fatalf("no note about the left-out messages: %q", out[2].Content)
	}
	if out[len(out)-2].Content != "turn 39" {
		t.Fatal("the latest turn was dropped")
	}
	validPairs(t, out)
}

func TestFitContextCutsAHugeSingleMessage(t *testing.T) {
	msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: "s"}, {Role: conversation.RoleUser, Content: strings.Repeat("é", 100_000)}}
	out, n := fitContext(msgs, 2000)
	if n == 0 || estimate(out) > 2000 || !strings.Contains(out[1].Content, "cut to fit") {
		t.Fatalf("estimate %d", estimate(out))
	}
	if !strings.HasPrefix(out[1].Content, "éé") || !strings.HasSuffix(out[1].Content, "éé") {
		t.Fatal("cut did not keep head and tail on rune boundaries")
	}
}

// Random conversations: the result always fits when fitting is possible,
// and tool results always stay with their calls.
func TestFitContextProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: strings.Repeat("s", r.IntN(400))}, {Role: conversation.RoleUser, Content: "task"}}
		for i, n := 0, r.IntN(30); i < n; i++ {
			if r.IntN(5) == 0 {
				msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: strings.Repeat("u", r.IntN(2000))})
				continue
			}
			calls := r.IntN(3)
			a := conversation.Message{Role: conversation.RoleAssistant, Content: strings.Repeat("a", r.IntN(500))}
			for c := 0; c < calls; c++ {
				a.ToolCalls = append(a.ToolCalls, conversation.ToolCall{ID: fmt.Sprintf("%d-%d", i, c), Name: "t", Arguments: "{}"})
			}
			msgs = append(msgs, a)
			for _, c := range a.ToolCalls {
				msgs = append(msgs, conversation.Message{Role: conversation.RoleTool, ToolCallID: c.ID, Content: strings.Repeat("o", r.IntN(20_000))})
			}
		}
		budget := 800 + r.IntN(8000)
		out, _ := fitContext(msgs, budget)
		if got := estimate(out); got > budget {
			t.Fatalf("trial %d: estimate %d > budget %d", trial, got, budget)
		}
		validPairs(t, out)
	}
}
