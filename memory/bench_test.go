package memory

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
// filesystem early in a session (10 boundaries before) and deep into a
// long one (10,000), and reports their ratio of medians (target < 1.5).
// Appends and a fixed-size state file should make both cost the same; a
// growing ratio would mean some write scales with history. A boundary's
// cost is mostly its fsyncs, whose latency on a shared disk swings
// several-fold from one second to the next: the two sessions take turns
// within each iteration (which goes first alternating), so both see the
// same disk, where two sub-benchmarks run one after the other did not.
// An op is one boundary of each session.
func BenchmarkBoundarySave(b *testing.B) {
	sizes := []int{10, 10000}
	sessions := make([]*Session, len(sizes))
	for k, at := range sizes {
		sessions[k] = prefilled(b, at)
	}
	took := make([][]time.Duration, len(sizes))
	i := sizes[len(sizes)-1]
	b.ReportAllocs()
	b.ResetTimer()
	pair := func() {
		i++
		for j := range sizes {
			k := (i + j) % len(sizes)
			start := time.Now()
			if err := boundary(sessions[k], i); err != nil {
				b.Fatal(err)
			}
			took[k] = append(took[k], time.Since(start))
		}
	}
	for b.Loop() {
		pair()
	}
	// A median of the few boundaries a loaded disk allows in the bench
	// time says little: the ratio takes at least minPairs of each.
	b.StopTimer()
	for len(took[0]) < minPairs {
		pair()
	}
	med := make([]time.Duration, len(sizes))
	for k, at := range sizes {
		slices.Sort(took[k])
		med[k] = took[k][len(took[k])/2]
		b.ReportMetric(float64(med[k])/float64(time.Microsecond), fmt.Sprintf("at%d-median-us", at))
	}
	b.ReportMetric(float64(med[1])/float64(med[0]), "10000/10")
}

// minPairs is the fewest boundaries of each session BoundarySave's ratio
// is taken over.
const minPairs = 100

// prefilled is a session whose files are as after at boundaries, filled in
// bulk, without paying at rounds of fsync outside the timer.
func prefilled(b *testing.B, at int) *Session {
	fs := afero.NewOsFs()
	s := newSession(b, fs, b.TempDir(), "sk-bench-secret-0123456789")
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
	return s
}

// BenchmarkOpenSession401 measures reopening a session of 401 messages
// (a system prompt, then 200 prompts and answers, as BenchmarkContinue401
// grows one), which a resume does before anything else: what a long
// history costs to read back.
func BenchmarkOpenSession401(b *testing.B) {
	fs := afero.NewOsFs()
	s := newSession(b, fs, b.TempDir())
	msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: strings.Repeat("You are ralph, a coding agent. ", 300)}}
	for i := 0; i < 200; i++ {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "say hi again"},
			conversation.Message{Role: conversation.RoleAssistant, Content: "hi"})
	}
	if err := s.AppendMessages(msgs...); err != nil {
		b.Fatal(err)
	}
	if err := s.SaveState(nil); err != nil {
		b.Fatal(err)
	}
	_ = s.Close()
	b.ReportAllocs()
	for b.Loop() {
		o, got, err := OpenSession(fs, s.Root, s.ID)
		if err != nil || len(got) != len(msgs) {
			b.Fatalf("%d messages: %v", len(got), err)
		}
		_ = o.Close()
	}
}
