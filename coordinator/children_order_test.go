package coordinator

import (
	"context"
	"fmt"
	"github.com/ralph-dev/ralph/coordinator/event"
	"testing"
)

// Child agents spawned in one turn are announced in call order: their
// tool_call and agent_spawned events, and their numbers, follow the
// model's calls, not the goroutines' timing (reversed in most runs
// before). Parallel 2 with six calls also checks children that wait for a
// place in the pool.
func TestSpawnedChildrenAreAnnouncedInCallOrder(t *testing.T) {
	for _, parallel := range []int{8, 2} {
		for round := 0; round < 10; round++ {
			f := newFamily(t, parallel, familyModel(6, 5))
			if res := f.coord.Run(context.Background(), "split the work"); res.Text != "all reported" {
				t.Fatalf("result = %+v", res)
			}
			var calls, spawned []string
			f.mu.Lock()
			for _, ev := range f.events {
				switch {
				case ev.Type == event.ToolCall && ev.ToolName == SpawnAgentTool:
					calls = append(calls, ev.ToolID)
				case ev.Type == event.AgentSpawned:
					spawned = append(spawned, ev.ToolID+"="+ev.AgentID)
				}
			}
			f.mu.Unlock()
			for i := range 6 {
				if want := fmt.Sprintf("spawn_%d", i+1); i >= len(calls) || calls[i] != want {
					t.Fatalf("parallel %d: tool_call events in the order %v, want the calls' order", parallel, calls)
				}
				if want := fmt.Sprintf("spawn_%d=agent-1.%d", i+1, i+1); i >= len(spawned) || spawned[i] != want {
					t.Fatalf("parallel %d: agent_spawned events in the order %v, want the calls' order and numbers", parallel, spawned)
				}
			}
		}
	}
}
