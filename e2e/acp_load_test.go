//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestACPLoadReplaysTheSession: an editor started again loads the
// session of its first run (session/load): ralph replays the
// conversation, the person's message and the answer, before it answers,
// and the model's next request holds the earlier turn.
func TestACPLoadReplaysTheSession(t *testing.T) {
	t.Parallel()
	dir, env, srv := acpProject(t, `{"responses":[{"text":"the first answer"},{"text":"the second answer"}]}`)
	first := acpEditor(t, dir, env, acpPlan{Steps: []acpStep{{Op: "new", Cwd: dir}, {Op: "prompt", Text: "the first question"}}})
	id, _ := first.result(t, "session/new", 0)["sessionId"].(string)
	if id == "" {
		t.Fatal("session/new named no session")
	}
	second := acpEditor(t, dir, env, acpPlan{Steps: []acpStep{{Op: "load", Cwd: dir, SessionID: id}, {Op: "prompt", Text: "the second question"}}})
	second.result(t, "session/load", 0)
	// The replay comes before session/load's answer.
	var replayed []string
	for _, e := range second.log {
		if e.Event == "result" && e.Method == "session/load" {
			break
		}
		if e.Event == "update" {
			var b bytes.Buffer
			_ = json.Compact(&b, e.Params)
			replayed = append(replayed, b.String())
		}
	}
	all := strings.Join(replayed, "\n")
	for _, want := range []string{`"sessionUpdate":"user_message_chunk"`, "the first question", `"sessionUpdate":"agent_message_chunk"`, "the first answer"} {
		if !strings.Contains(all, want) {
			t.Errorf("the replay lacks %s:\n%s", want, all)
		}
	}
	if r := second.stopReason(t, 0); r != "end_turn" {
		t.Fatalf("stop reason %q", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	body := string(reqs[1].Body)
	for _, want := range []string{"the first question", "the first answer", "the second question"} {
		if !strings.Contains(body, want) {
			t.Errorf("the model's second request lacks %q", want)
		}
	}
}
