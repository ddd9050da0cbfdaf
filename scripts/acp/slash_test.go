package acp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// answerText is the agent's message chunks since the updates were last
// cleared, joined.
func (c *client) answerText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.updates {
		if u := n.Update.AgentMessageChunk; u != nil && u.Content.Text != nil {
			b.WriteString(u.Content.Text.Text)
		}
	}
	return b.String()
}

func (c *client) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates, c.asked = nil, nil
}

// advertisedNames are the commands of the last available_commands_update.
func (c *client) advertisedNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.updates {
		if u := n.Update.AvailableCommandsUpdate; u != nil {
			out = nil
			for _, cmd := range u.AvailableCommands {
				out = append(out, cmd.Name)
			}
		}
	}
	return out
}

const shellCommand = "---\ndescription: summarise the state\n---\nSummarise this state:\n!`cat state.txt`\n"

// TestSlashCustomCommandRunsThroughApproval: a prompt "/state" naming the
// person's custom command sends its expansion, its shell line run once
// the permission request is answered yes and its output in the message;
// answered no, nothing is sent to the model and the person is told.
func TestSlashCustomCommandRunsThroughApproval(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{optionYes, optionNo} {
		h := start(t, `{"loop":true,"responses":[{"text":"Summarised."}]}`, false, fullAccess)
		if err := os.WriteFile(filepath.Join(h.dir, "state.txt"), []byte("STATE-7f2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(h.dir, ".claude", "commands"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.dir, ".claude", "commands", "state.md"), []byte(shellCommand), 0o644); err != nil {
			t.Fatal(err)
		}
		h.c.answer = answer
		id := h.newSession(t)
		if names := h.c.advertisedNames(); !slices.Contains(names, "state") {
			t.Fatalf("the custom command is not advertised: %v", names)
		}
		if r := h.prompt(t, id, "/state"); r != sdk.StopReasonEndTurn {
			t.Fatalf("%s: stop reason %q", answer, r)
		}
		h.c.mu.Lock()
		asked := len(h.c.asked)
		h.c.mu.Unlock()
		if asked != 1 {
			t.Errorf("%s: %d permission requests", answer, asked)
		}
		var sent strings.Builder
		for _, r := range h.srv.Requests() {
			sent.Write(r.Body)
		}
		switch answer {
		case optionYes:
			if !strings.Contains(sent.String(), "Summarise this state:") || !strings.Contains(sent.String(), "STATE-7f2") {
				t.Errorf("the model was sent %s", sent.String())
			}
			if got := h.c.answerText(); got != "/state: sending .claude/commands/state.md\nSummarised." {
				t.Errorf("answer %q", got)
			}
		case optionNo:
			if len(h.srv.Requests()) != 0 {
				t.Errorf("the model was sent %s", sent.String())
			}
			if got := h.c.answerText(); !strings.Contains(got, "not run") {
				t.Errorf("the person was told %q", got)
			}
		}
	}
}

// TestSlashBuiltinsAdvertisedRun: every built-in command the session
// advertises runs from a prompt and answers with its output, none says
// it is not available here; /status's output names the session.
func TestSlashBuiltinsAdvertisedRun(t *testing.T) {
	t.Parallel()
	h := start(t, `{"loop":true,"responses":[{"text":"ok"}]}`, false)
	id := h.newSession(t)
	names := h.c.advertisedNames()
	for _, want := range []string{"status", "init", "model", "cost", "diff", "undo"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not advertised: %v", want, names)
		}
	}
	for _, name := range names {
		h.c.clear()
		if r := h.prompt(t, id, "/"+name); r != sdk.StopReasonEndTurn {
			t.Errorf("/%s: stop reason %q", name, r)
		}
		got := h.c.answerText()
		if got == "" || strings.Contains(got, "not available") || strings.Contains(got, "unknown command") {
			t.Errorf("/%s answered %q", name, got)
		}
		if name == "status" && !strings.Contains(got, string(id)) {
			t.Errorf("/status answered %q", got)
		}
	}
}

// TestSlashUnadvertisedGoesToTheModel: a prompt naming a command the
// session does not advertise (/exit, which needs a terminal) goes to the
// model as written.
func TestSlashUnadvertisedGoesToTheModel(t *testing.T) {
	t.Parallel()
	h := start(t, `{"responses":[{"text":"ok"}]}`, false)
	id := h.newSession(t)
	h.prompt(t, id, "/exit now")
	reqs := h.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "/exit now") {
		t.Fatalf("the model was not sent the prompt: %d requests", len(reqs))
	}
}
