//go:build unix

package coordinator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/workers/hooks"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// withHooks gives h's coordinator the hooks of a Claude Code settings
// file whose commands are the given shell scripts, in a directory outside
// the project ({bin} in settings); every script may append its input to
// $HOME/log.jsonl (logInput).
func withHooks(t *testing.T, h *harness, settings string, scripts map[string]string) (bin string) {
	t.Helper()
	h.coord.opts.Hooks, bin = workerstest.HookSet(t, h.root, settings, scripts)
	return bin
}

// logInput is a script body that appends the hook's input to the log, one
// line each.
const logInput = "{ cat; echo; } >> \"$HOME/log.jsonl\"\n"

// eachInput is a script body that keeps the hook's input in $in and in a
// file of its own, for hooks that run at the same time.
const eachInput = "in=$(cat); printf '%s' \"$in\" > \"$(mktemp \"$HOME/in.XXXXXX\")\"\n"

// hookLog is every input the hooks logged, in order.
func hookLog(t *testing.T, bin string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(bin, "log.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// events is the log as "event:detail" words: the source, reason, trigger
// or stop_hook_active of each.
func events(log []map[string]any) string {
	var words []string
	for _, m := range log {
		w, _ := m["hook_event_name"].(string)
		for _, k := range []string{"source", "reason", "trigger", "stop_hook_active"} {
			if v, ok := m[k]; ok {
				b, _ := json.Marshal(v)
				w += ":" + strings.Trim(string(b), `"`)
			}
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// A Stop hook keeps the agent working as long as it blocks, as in Claude
// Code: ralph has no cap of its own (issue 69), the hook decides with
// stop_hook_active and last_assistant_message.
func TestStopHookKeepsTheAgentWorkingWhileItBlocks(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"done 1"},{"text":"done 2"},{"text":"done 3"},{"text":"done 4"},{"text":"done 5"},{"text":"done 6"}]}`)
	bin := withHooks(t, h, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"{bin}/stop.sh"}]}]}}`,
		map[string]string{"stop.sh": logInput + "n=$(grep -c Stop \"$HOME/log.jsonl\")\nif [ \"$n\" -le 4 ]; then echo 'the tests were not run' >&2; exit 2; fi\n"})
	res := h.coord.Run(context.Background(), "fix it")
	if res.IsError || res.Text != "done 5" || res.NumTurns != 5 {
		t.Fatalf("result %+v: want the answer after 4 kept turns", res)
	}
	log := hookLog(t, bin)
	if got, want := events(log), "Stop:false Stop:true Stop:true Stop:true Stop:true"; got != want {
		t.Fatalf("Stop inputs %q, want %q", got, want)
	}
	if got := log[2]["last_assistant_message"]; got != "done 3" {
		t.Fatalf("last_assistant_message %v, want the answer that made Stop fire", got)
	}
	msgs := h.lastRequestMessages()
	if last := msgs[len(msgs)-1]; last.Role != "user" || !strings.Contains(last.Content, "the tests were not run") {
		t.Fatalf("last message the model saw %+v: want the hook's reason as a user message", last)
	}
	if n := h.count(event.Warning); n != 0 {
		t.Fatalf("%d warnings: a hook that lets go in the end is no trouble", n)
	}
}

// A Stop hook that never lets go is ended by the turn limit, which says
// in its one line that Stop hooks kept the agent working.
func TestStopHookThatAlwaysBlocksEndsAtTheTurnLimit(t *testing.T) {
	h := newHarness(t, `{"name":"x","loop":true,"responses":[{"text":"done"}]}`)
	withHooks(t, h, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"{bin}/stop.sh"}]}]}}`,
		map[string]string{"stop.sh": "echo 'not yet' >&2\nexit 2\n"})
	res := h.coord.Run(context.Background(), "fix it")
	if !res.IsError || res.Subtype != event.SubtypeMaxTurns || res.Err == nil ||
		!strings.Contains(res.Err.Error(), "Stop hooks kept the agent working after 10 answers") {
		t.Fatalf("result %+v: want the turn limit, naming the Stop hooks", res)
	}
}

func TestUserPromptSubmitBlocksThePromptOrAddsContext(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"hello back"}]}`)
	withHooks(t, h, `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"{bin}/prompt.sh"}]}]}}`,
		map[string]string{"prompt.sh": `if grep -q password; then echo 'no passwords in prompts' >&2; exit 2; fi
printf '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"the branch is main"}}'
`})
	res := h.coord.Run(context.Background(), "my password is hunter2")
	if !res.IsError || !errors.Is(res.Err, ErrPromptBlocked) || !strings.Contains(res.Text, "no passwords in prompts") {
		t.Fatalf("result %+v: want the prompt blocked with the hook's reason", res)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Fatalf("%d requests: a blocked prompt must not reach the model", n)
	}
	for _, m := range h.coord.Messages() {
		if strings.Contains(m.Content, "hunter2") {
			t.Fatal("the blocked prompt is in the conversation")
		}
	}
	if res := h.coord.Run(context.Background(), "hello"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	msgs := h.lastRequestMessages()
	if msgs[0].Content != "system prompt" || !strings.Contains(msgs[1].Content, "hello") || !strings.Contains(msgs[1].Content, "the branch is main") {
		t.Fatalf("request %+v: want the context in the user turn, the system prompt as it was", msgs)
	}
}

func TestSessionStartEndAndCompactFireWithTheirSources(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"first"},{"text":"a summary"},{"text":"second"},{"text":"third"}]}`)
	bin := withHooks(t, h, `{"hooks":{
		"SessionStart":[{"hooks":[{"type":"command","command":"{bin}/start.sh"}]}],
		"SessionEnd":[{"hooks":[{"type":"command","command":"{bin}/log.sh"}]}],
		"PreCompact":[{"matcher":"manual","hooks":[{"type":"command","command":"{bin}/log.sh"}]}]}}`,
		map[string]string{"start.sh": logInput + "echo 'remember the style guide'\n", "log.sh": logInput})
	h.coord.Run(context.Background(), "one")
	if msgs := h.lastRequestMessages(); !strings.Contains(msgs[1].Content, "remember the style guide") || msgs[0].Content != "system prompt" {
		t.Fatalf("first request %+v: want SessionStart's context in the first user turn", msgs)
	}
	if _, err := h.coord.Compact(context.Background(), "keep the plan"); err != nil {
		t.Fatal(err)
	}
	h.coord.Run(context.Background(), "two")
	if _, err := h.coord.Reset(); err != nil {
		t.Fatal(err)
	}
	h.coord.Run(context.Background(), "three")
	h.coord.SetEndReason(EndExit)
	h.coord.EndSession(context.Background())
	h.coord.EndSession(context.Background()) // once
	log := hookLog(t, bin)
	if got, want := events(log), "SessionStart:startup PreCompact:manual SessionStart:compact SessionEnd:clear SessionStart:clear SessionEnd:prompt_input_exit"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	first := log[0]
	if first["session_id"] != "s1" || first["cwd"] != h.root || !strings.HasSuffix(first["transcript_path"].(string), "/s1/transcript.jsonl") {
		t.Fatalf("common fields %v", first)
	}
	if log[1]["custom_instructions"] != "keep the plan" {
		t.Fatalf("PreCompact input %v", log[1])
	}
}

func TestNoHooksBuildsNothing(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"ok"}]}`)
	ctx := context.Background()
	if got := h.coord.hookCall(ctx, "call_1"); got != ctx {
		t.Fatal("a coordinator without hooks must call its tools with ctx as it is")
	}
	if res := h.coord.Run(ctx, "hi"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	h.coord.EndSession(ctx)
}

func TestSpawnAgentIsTaskToHooksAndChildrenFireSubagentStop(t *testing.T) {
	f := newFamily(t, 2, familyModel(3, 1))
	bin := t.TempDir()
	guard := filepath.Join(bin, "guard.sh")
	if err := os.WriteFile(guard, []byte("#!/bin/sh\n"+eachInput+"case \"$in\" in *'task 2'*) echo 'no second task' >&2; exit 2;; esac\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	logger := filepath.Join(bin, "log.sh")
	if err := os.WriteFile(logger, []byte("#!/bin/sh\n"+eachInput), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := hooks.Parse([]byte(`{"hooks":{
		"PreToolUse":[{"matcher":"Task","hooks":[{"type":"command","command":"`+guard+`"}]}],
		"SubagentStop":[{"hooks":[{"type":"command","command":"`+logger+`"}]}],
		"Stop":[{"hooks":[{"type":"command","command":"`+logger+`"}]}]}}`), hooks.SourceUser, "settings.json", "")
	if err != nil {
		t.Fatal(err)
	}
	f.coord.opts.Hooks = &hooks.Set{Config: cfg, Runner: &hooks.Runner{ProjectDir: bin, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + bin}}}
	res := f.coord.Run(context.Background(), "split the work")
	if res.IsError || res.Text != "all reported" {
		t.Fatalf("result %+v", res)
	}
	if n, _ := f.count(event.AgentSpawned); n != 2 {
		t.Fatalf("%d children started, want 2: the hook refused the second", n)
	}
	reqs := f.srv.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	if m := last[len(last)-2]; m.ToolCallID != "spawn_2" || !strings.Contains(m.Content, "no second task") {
		t.Fatalf("spawn_2's result %+v: want the hook's reason", m)
	}
	var tasks, subStops, stops int
	inputs, _ := filepath.Glob(filepath.Join(bin, "in.*"))
	for _, p := range inputs {
		var m map[string]any
		if data, err := os.ReadFile(p); err != nil || json.Unmarshal(data, &m) != nil {
			t.Fatalf("%s: %v: %s", p, err, data)
		}
		switch m["hook_event_name"] {
		case "PreToolUse":
			if ti, _ := m["tool_input"].(map[string]any); m["tool_name"] == "Task" && strings.HasPrefix(ti["prompt"].(string), "task ") {
				tasks++
			}
		case "SubagentStop":
			subStops++
		case "Stop":
			stops++
		}
	}
	if tasks != 3 || subStops != 2 || stops != 1 {
		t.Fatalf("Task %d, SubagentStop %d, Stop %d: want 3, 2, 1", tasks, subStops, stops)
	}
}

func TestNotificationHookGetsRalphsWords(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"ok"}]}`)
	bin := withHooks(t, h, `{"hooks":{"Notification":[{"matcher":"permission_prompt","hooks":[{"type":"command","command":"{bin}/log.sh"}]}]}}`,
		map[string]string{"log.sh": logInput})
	h.coord.Notify(context.Background(), "run `make deploy`? [y]es / [n]o", "permission_prompt")
	h.coord.Notify(context.Background(), "the run ended", "run_ended")
	log := hookLog(t, bin)
	if len(log) != 1 || log[0]["message"] != "run `make deploy`? [y]es / [n]o" || log[0]["notification_type"] != "permission_prompt" || log[0]["title"] != "ralph" {
		t.Fatalf("Notification inputs %v: want the question only, matched by its type", log)
	}
}

// A compaction ralph starts because the endpoint refused the conversation
// as too long fires PreCompact with trigger auto, then SessionStart with
// source compact.
func TestAutoCompactionFiresPreCompactAuto(t *testing.T) {
	h := newHarness(t, `{"name":"x","responses":[{"text":"one"},`+contextError+`,{"text":"SUM"},{"text":"two"}]}`)
	bin := withHooks(t, h, `{"hooks":{
		"PreCompact":[{"matcher":"auto","hooks":[{"type":"command","command":"{bin}/log.sh"}]}],
		"SessionStart":[{"matcher":"compact","hooks":[{"type":"command","command":"{bin}/log.sh"}]}]}}`,
		map[string]string{"log.sh": logInput})
	h.coord.Run(context.Background(), "first")
	if res := h.coord.Run(context.Background(), "second"); res.IsError || res.Text != "two" {
		t.Fatalf("result %+v", res)
	}
	if got, want := events(hookLog(t, bin)), "PreCompact:auto SessionStart:compact"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
}
