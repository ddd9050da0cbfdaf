//go:build ignore

// record runs the real Claude Code CLI against ralph's stand-in model with
// hooks that copy what Claude Code gives them, so that ralph's hook input
// can be checked against the real thing. It is not part of any build:
//
//	go run ./testdata/claude-code-transcript/record.go CLAUDE OUTDIR
//
// CLAUDE is the claude binary (2.1.197 for the files beside this one),
// OUTDIR where the raw recording goes; README.md says how it was trimmed.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// step is the model's answer once n tool results are in the conversation.
func step(dir string, n int) llmtest.Response {
	call := func(name string, args map[string]any) llmtest.Response {
		b, _ := json.Marshal(args)
		return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: string(b)}}}
	}
	notes := filepath.Join(dir, "notes.txt")
	switch n {
	case 0:
		r := call("Write", map[string]any{"file_path": notes, "content": "one\ntwo\nthree\n"})
		r.Text = "I'll write the notes first."
		return r
	case 1:
		return call("Edit", map[string]any{"file_path": notes, "old_string": "two", "new_string": "TWO"})
	case 2:
		return call("Read", map[string]any{"file_path": notes})
	case 3:
		return call("Bash", map[string]any{"command": "echo out; echo err >&2", "description": "Print to both streams"})
	case 4:
		return call("Write", map[string]any{"file_path": notes, "content": "rewritten\n"})
	case 5:
		return call("Bash", map[string]any{"command": "exit 3", "description": "Fail"})
	}
	return llmtest.Response{Text: "All done: the notes are rewritten."}
}

// results counts the tool_result blocks of a Messages request, and says
// whether it offers tools (Claude Code's side requests offer none).
func results(body []byte) (n int, tools bool) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n, len(req.Tools) > 0
}

// hook copies its standard input to OUTDIR/rec/EVENT-N.json, and for Stop
// the transcript it names as it is at that moment.
const hook = `d="$CLAUDE_PROJECT_DIR/rec"; mkdir -p "$d"; f="$d/$(date +%s%N).json"; cat > "$f"; ` +
	`if [ "$(jq -r .hook_event_name "$f")" = Stop ]; then cp "$(jq -r .transcript_path "$f")" "$d/transcript-at-stop.jsonl"; fi`

// blocker blocks the first Stop and lets the second one through.
const blocker = `if [ "$(jq -r .stop_hook_active)" = true ]; then exit 0; fi; echo '{"decision":"block","reason":"Say it once more."}'`

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: record CLAUDE OUTDIR")
		os.Exit(2)
	}
	claude, out := os.Args[1], os.Args[2]
	for _, run := range []string{"bypassPermissions", "acceptEdits", "default", "plan", "stopblock"} {
		mode := run
		if run == "stopblock" {
			mode = "acceptEdits"
		}
		dir := filepath.Join(out, run)
		home := filepath.Join(out, run+"-home")
		must(os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
		must(os.MkdirAll(home, 0o755))
		cmd := map[string]any{"type": "command", "command": hook}
		settings := map[string]any{"hooks": map[string]any{}}
		for _, ev := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "UserPromptSubmit", "SessionStart", "SessionEnd"} {
			settings["hooks"].(map[string]any)[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{cmd}}}
		}
		if run == "stopblock" {
			// A Stop hook that keeps the model going once, as a loop
			// plugin's does, to see stop_hook_active and what the
			// transcript keeps of the block.
			settings["hooks"].(map[string]any)["Stop"] = []any{map[string]any{"hooks": []any{cmd, map[string]any{"type": "command", "command": blocker}}}}
		}
		b, _ := json.MarshalIndent(settings, "", "  ")
		must(os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), b, 0o644))
		srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
			n, tools := results(r.Body)
			if !tools {
				return llmtest.Response{Text: "ok"}
			}
			return step(dir, n)
		})
		c := exec.Command(claude, "-p", "write the notes", "--output-format", "stream-json", "--verbose", "--permission-mode", mode)
		c.Dir = dir
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + strings.TrimSuffix(srv.URL, "/v1"),
			"ANTHROPIC_API_KEY=fake-anthropic-key", "IS_SANDBOX=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
		o, err := c.CombinedOutput()
		must(os.WriteFile(filepath.Join(out, run+"-stream.jsonl"), o, 0o644))
		srv.Close()
		fmt.Println(run, err)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
