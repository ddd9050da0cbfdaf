//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestACPCancelStopsTheCommand: session/cancel while the model's command
// runs in the sandbox is ralph's hard stop: the prompt answers cancelled
// within two seconds, and the command is killed, no process of it left.
func TestACPCancelStopsTheCommand(t *testing.T) {
	t.Parallel()
	sleep := fmt.Sprintf("sleep 30.%05d", time.Now().UnixNano()%100000)
	dir, env, _ := acpProject(t, toolScenario(t, "acp-cancel", [][]toolCall{
		{{"run_command", fmt.Sprintf(`{"command":"touch started && %s && touch finished"}`, sleep)}},
	}, "done"))
	s := acpEditor(t, dir, env, acpPlan{Answers: []string{"yes"}, Steps: []acpStep{
		{Op: "new", Cwd: dir},
		{Op: "prompt", Text: "wait", CancelWhenFile: filepath.Join(dir, "started")},
		{Op: "procs", Pattern: sleep},
	}})
	if r := s.stopReason(t, 0); r != "cancelled" {
		t.Fatalf("stop reason %q", r)
	}
	var cancelled, answered int = -1, -1
	var left []string
	looked := false
	for _, e := range s.log {
		switch {
		case e.Event == "cancel":
			cancelled = e.Ms
		case e.Event == "result" && e.Method == "session/prompt":
			answered = e.Ms
		case e.Event == "procs":
			looked = true
			if err := json.Unmarshal(e.Result, &left); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cancelled < 0 || answered-cancelled > 2000 {
		t.Errorf("the prompt answered %d ms after the cancel", answered-cancelled)
	}
	if !looked {
		t.Error("the editor did not look for the command's processes")
	}
	if len(left) > 0 {
		t.Errorf("the cancelled command is still running: %v", left)
	}
	if exists(filepath.Join(dir, "finished")) {
		t.Error("the command ran to its end")
	}
}
