package memory

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/spf13/afero"
)

// boundaryMessages are the two messages one agent iteration typically adds:
// an assistant turn with a tool call and the tool's result.
func boundaryMessages(i int) []conversation.Message {
	id := "call_" + strconv.Itoa(i)
	return []conversation.Message{
		{Role: conversation.RoleAssistant, Content: "Running the tests.", ToolCalls: []conversation.ToolCall{
			{ID: id, Name: "run_command", Arguments: `{"command":"go test ./..."}`}}},
		{Role: conversation.RoleTool, ToolCallID: id, Content: strings.Repeat("ok  \tgithub.com/x/y\t0.01s\n", 20)},
	}
}

type boundaryEvent struct {
	Type      string `json:"type"`
	Iteration int    `json:"iteration"`
	Tool      string `json:"tool"`
}

// boundary is what the coordinator writes at the end of every iteration.
func boundary(s *Session, i int) error {
	if err := s.AppendMessages(boundaryMessages(i)...); err != nil {
		return err
	}
	if err := s.AppendEvent(boundaryEvent{Type: "tool_result", Iteration: i, Tool: "run_command"}); err != nil {
		return err
	}
	return s.SaveState(func(st *State) { st.Iteration = i; st.Turns = i })
}

// BenchmarkBoundarySave measures one iteration boundary on the real
// filesystem early in a session and deep into a long one. Appends and a
// fixed-size state file should make both cost the same; a growing ratio
// would mean some write scales with history.
func BenchmarkBoundarySave(b *testing.B) {
	for _, at := range []int{10, 10000} {
		b.Run(fmt.Sprintf("at=%d", at), func(b *testing.B) {
			fs := afero.NewOsFs()
			s := newSession(b, fs, b.TempDir(), "sk-bench-secret-0123456789")
			// Pre-fill in bulk: the files end up as after `at` boundaries,
			// without paying `at` rounds of fsync outside the timer.
			var msgs []conversation.Message
			for i := 1; i <= at; i++ {
				msgs = append(msgs, boundaryMessages(i)...)
			}
			if err := s.AppendMessages(msgs...); err != nil {
				b.Fatal(err)
			}
			var events strings.Builder
			for i := 1; i <= at; i++ {
				fmt.Fprintf(&events, `{"type":"tool_result","iteration":%d,"tool":"run_command"}`+"\n", i)
			}
			if err := AppendFile(fs, filepath.Join(s.Dir, "events.jsonl"), []byte(events.String()), true); err != nil {
				b.Fatal(err)
			}
			if err := s.SaveState(func(st *State) { st.Iteration = at }); err != nil {
				b.Fatal(err)
			}
			i := at
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				i++
				if err := boundary(s, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
