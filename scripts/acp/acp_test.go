package acp

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/config"
)

// client is a test's editor: it records every update and answers
// permission requests with answer, files from buffers.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	asked   []sdk.RequestPermissionRequest
	answer  string // the option id to select; "" cancels
	buffers map[string]string
	reads   []string
	writes  map[string]string
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *client) RequestPermission(_ context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, r)
	if c.answer == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(c.answer))}, nil
}

func (c *client) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, r.Path)
	if b, ok := c.buffers[r.Path]; ok {
		return sdk.ReadTextFileResponse{Content: b}, nil
	}
	b, err := os.ReadFile(r.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found: " + r.Path}
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *client) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes == nil {
		c.writes = map[string]string{}
	}
	c.writes[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, os.WriteFile(r.Path, []byte(r.Content), 0o644)
}

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	panic("ralph sent the model's command to the editor's terminal")
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, nil
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, nil
}

// kinds are the updates' kinds in order, as the protocol names them.
func (c *client) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.updates {
		b, _ := json.Marshal(n.Update)
		var k struct {
			SessionUpdate string `json:"sessionUpdate"`
		}
		_ = json.Unmarshal(b, &k)
		out = append(out, k.SessionUpdate)
	}
	return out
}

// harness is ralph acp in process against a stand-in model, and an
// editor on the other end of two pipes.
type harness struct {
	srv    *llmtest.Server
	mode   string
	conn   *sdk.ClientSideConnection
	c      *client
	dir    string
	done   chan error
	cancel func()
}

// fullAccess runs the model's commands without the sandbox, whose helper
// is the ralph binary and so not this test's (the e2e tests run it).
const fullAccess = "danger-full-access"

func start(t *testing.T, scenario string, fs bool, mode ...string) *harness {
	t.Helper()
	return startOffering(t, scenario, fs, fs, mode...)
}

// startOffering is start with the client offering reading files (read)
// and writing them (write) each on its own.
func startOffering(t *testing.T, scenario string, read, write bool, mode ...string) *harness {
	t.Helper()
	sc, err := llmtest.ParseScenario([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	dir, home := t.TempDir(), t.TempDir()
	vars := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "test", "RALPH_MODEL": "m", "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	open := func(ctx context.Context, r OpenRequest) (*project.Project, error) {
		o := project.Options{Dir: r.Dir, Mode: project.ModeChat, Resume: r.Resume, SessionID: r.SessionID, Notify: r.Notify,
			Getenv: func(k string) string { return vars[k] }}
		if len(mode) > 0 {
			o.Overrides.Apply = func(cfg *config.Config) error {
				cfg.Sandbox = mode[0]
				return nil
			}
		}
		if r.Files != nil {
			o.Editor = r.Files
		}
		return project.Open(ctx, o)
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{srv: srv, mode: "workspace-write", c: &client{buffers: map[string]string{}}, dir: dir, done: make(chan error, 1), cancel: cancel}
	if len(mode) > 0 {
		h.mode = mode[0]
	}
	go func() {
		h.done <- Serve(ctx, Options{In: agentIn, Out: agentOut, Log: io.Discard, Version: "test", Open: open})
		agentOut.Close()
	}()
	h.conn = sdk.NewClientSideConnection(h.c, clientOut, clientIn)
	t.Cleanup(func() {
		clientOut.Close()
		select {
		case <-h.done:
		case <-time.After(30 * time.Second):
			t.Error("ralph acp did not end after the editor went away")
		}
		cancel()
	})
	caps := sdk.ClientCapabilities{}
	caps.Fs = sdk.FileSystemCapabilities{ReadTextFile: read, WriteTextFile: write}
	init, err := h.conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || !init.AgentCapabilities.PromptCapabilities.Image || init.AgentInfo.Name != "ralph" {
		t.Fatalf("initialize = %+v", init)
	}
	return h
}

func (h *harness) newSession(t *testing.T) sdk.SessionId {
	t.Helper()
	s, err := h.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: h.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Modes == nil || string(s.Modes.CurrentModeId) != h.mode || len(s.Modes.AvailableModes) != 3 {
		t.Fatalf("modes = %+v", s.Modes)
	}
	return s.SessionId
}

func (h *harness) prompt(t *testing.T, id sdk.SessionId, text string) sdk.StopReason {
	t.Helper()
	r, err := h.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		t.Fatal(err)
	}
	return r.StopReason
}

// TestPromptStreamsToolCallAndDiff: a prompt's answer streams as message
// chunks, its write_file as a tool call of kind edit with the file's
// location, and the call's end as an update with the diff.
func TestPromptStreamsToolCallAndDiff(t *testing.T) {
	t.Parallel()
	h := start(t, `{"responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"hello.txt\",\"content\":\"hi\\n\"}"}]},
		{"text":"I wrote hello.txt."}]}`, false)
	id := h.newSession(t)
	if r := h.prompt(t, id, "write hello"); r != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", r)
	}
	b, err := os.ReadFile(filepath.Join(h.dir, "hello.txt"))
	if err != nil || string(b) != "hi\n" {
		t.Fatalf("hello.txt = %q, %v", b, err)
	}
	kinds := strings.Join(h.c.kinds(), " ")
	for _, want := range []string{"available_commands_update", "tool_call tool_call_update", "agent_message_chunk"} {
		if !strings.Contains(kinds, want) {
			t.Errorf("updates %s lack %s", kinds, want)
		}
	}
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	var call *sdk.SessionUpdateToolCall
	var diff *sdk.ToolCallContentDiff
	var text strings.Builder
	for _, n := range h.c.updates {
		u := n.Update
		switch {
		case u.ToolCall != nil:
			call = u.ToolCall
		case u.ToolCallUpdate != nil:
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	abs := filepath.Join(h.dir, "hello.txt")
	if call == nil || call.Kind != sdk.ToolKindEdit || len(call.Locations) != 1 || call.Locations[0].Path != abs {
		t.Errorf("tool call = %+v", call)
	}
	if diff == nil || diff.Path != abs || diff.NewText != "hi\n" || diff.OldText != nil {
		t.Errorf("diff = %+v", diff)
	}
	if text.String() != "I wrote hello.txt." {
		t.Errorf("answer %q", text.String())
	}
}

// updatesOf are the tool call updates' texts, joined.
func (c *client) toolTexts() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.updates {
		if u := n.Update.ToolCallUpdate; u != nil {
			for _, ct := range u.Content {
				if ct.Content != nil && ct.Content.Content.Text != nil {
					b.WriteString(ct.Content.Content.Text.Text + "\n")
				}
			}
		}
	}
	return b.String()
}

const touchScenario = `{"responses":[
	{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"touch made\"}"}]},
	{"text":"done"}]}`

// TestPermissionAskedAndAnswered: a command the policy asks about is a
// permission request naming the pending tool call, with Yes, Always
// (the command's rule can form) and No; yes runs it, no and a cancelled
// request do not.
func TestPermissionAskedAndAnswered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer string
		runs   bool
	}{{optionYes, true}, {optionNo, false}, {"", false}} {
		h := start(t, touchScenario, false, fullAccess)
		h.c.answer = tc.answer
		id := h.newSession(t)
		h.prompt(t, id, "touch it")
		_, err := os.Stat(filepath.Join(h.dir, "made"))
		if (err == nil) != tc.runs {
			t.Errorf("answer %q: the command ran = %v; results: %s", tc.answer, err == nil, h.c.toolTexts())
		}
		h.c.mu.Lock()
		if len(h.c.asked) != 1 {
			t.Fatalf("answer %q: %d requests", tc.answer, len(h.c.asked))
		}
		q := h.c.asked[0]
		var ids []string
		for _, o := range q.Options {
			ids = append(ids, string(o.OptionId)+":"+string(o.Kind))
		}
		if got := strings.Join(ids, " "); got != "yes:allow_once always:allow_always always-project:allow_always no:reject_once" {
			t.Errorf("options %s", got)
		}
		var callID sdk.ToolCallId
		for _, n := range h.c.updates {
			if n.Update.ToolCall != nil {
				callID = n.Update.ToolCall.ToolCallId
				if n.Update.ToolCall.Status != sdk.ToolCallStatusPending || n.Update.ToolCall.Kind != sdk.ToolKindExecute {
					t.Errorf("tool call %+v", n.Update.ToolCall)
				}
			}
		}
		if q.ToolCall.ToolCallId != callID || callID == "" {
			t.Errorf("the request names %q, the call was %q", q.ToolCall.ToolCallId, callID)
		}
		h.c.mu.Unlock()
	}
}

// TestCancelStopsTheTurn: session/cancel mid-command stops the turn hard:
// the prompt answers cancelled long before the command would end.
func TestCancelStopsTheTurn(t *testing.T) {
	t.Parallel()
	h := start(t, `{"responses":[
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"sleep 60\"}"}]},
		{"text":"done"}]}`, false, fullAccess)
	h.c.answer = optionYes
	id := h.newSession(t)
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			h.c.mu.Lock()
			asked := len(h.c.asked)
			h.c.mu.Unlock()
			if asked > 0 {
				time.Sleep(300 * time.Millisecond)
				_ = h.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: id})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	began := time.Now()
	if r := h.prompt(t, id, "wait"); r != sdk.StopReasonCancelled {
		t.Fatalf("stop reason %q", r)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Fatalf("the cancelled turn took %s", d)
	}
}

// TestLoadReplaysTheSession: session/load of a session answered before
// replays its conversation (the person's message, the tool call, the
// answer) before it answers, and a prompt goes on from it.
func TestLoadReplaysTheSession(t *testing.T) {
	t.Parallel()
	h := start(t, `{"responses":[
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"a\"}"}]},
		{"text":"first answer"},
		{"text":"second answer"}]}`, false)
	id := h.newSession(t)
	h.prompt(t, id, "first question")
	h.c.mu.Lock()
	h.c.updates = nil
	h.c.mu.Unlock()
	if _, err := h.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: h.dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	kinds := strings.Join(h.c.kinds(), " ")
	if !strings.HasPrefix(kinds, "user_message_chunk tool_call tool_call_update agent_message_chunk") {
		t.Fatalf("replayed %s", kinds)
	}
	if r := h.prompt(t, id, "second question"); r != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", r)
	}
}

// TestClientFilesServeTheTools: with the client's fs offered, read_file
// reads the editor's buffer (not the disk) and write_file writes through
// fs/write_text_file.
func TestClientFilesServeTheTools(t *testing.T) {
	t.Parallel()
	h := start(t, `{"responses":[
		{"tool_calls":[{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}]},
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"b.txt\",\"content\":\"new\\n\"}"}]},
		{"text":"done"}]}`, true)
	if err := os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("disk text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.c.buffers[filepath.Join(h.dir, "a.txt")] = "buffer text\n"
	h.c.answer = optionYes
	id := h.newSession(t)
	h.prompt(t, id, "read and write")
	if out := h.c.toolTexts(); !strings.Contains(out, "buffer text") || strings.Contains(out, "disk text") {
		t.Errorf("read_file's result: %s", out)
	}
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if h.c.writes[filepath.Join(h.dir, "b.txt")] != "new\n" {
		t.Errorf("writes %v", h.c.writes)
	}
}
