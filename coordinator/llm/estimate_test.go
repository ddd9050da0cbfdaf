package llm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestEstimateToolsCountsEachDefinitionOnce: the estimate of the tool
// list is the estimate of each definition as one framed part, and asking
// it costs no allocation, since every model call of every agent asks.
func TestEstimateToolsCountsEachDefinitionOnce(t *testing.T) {
	tools := []conversation.ToolDef{
		{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "bash", Description: strings.Repeat("Run a command. ", 40), Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	}
	want := 0
	for _, d := range tools {
		want += conversation.EstimateTokens(conversation.Message{Content: d.Name + d.Description + string(d.Parameters)})
	}
	if got := EstimateTools(tools); got != want {
		t.Fatalf("EstimateTools = %d, want %d (the per-message estimate of each definition)", got, want)
	}
	if got := EstimateTools(nil); got != 0 {
		t.Errorf("EstimateTools(nil) = %d, want 0", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { EstimateTools(tools) }); allocs != 0 {
		t.Errorf("EstimateTools allocates %.0f times per call, want none", allocs)
	}
}
