package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// wireCase is one of the APIs ralph speaks, with a model served on it
// and the tool calls that model makes in its own family's terms.
type wireCase struct {
	name  string
	env   func(t *testing.T, srv *llmtest.Server) []string
	args  []string
	path  string // the API's path
	calls string // turn one's tool calls (scenario JSON): write a.txt, then cat it
	// offered and called are names the first request offers and the
	// second carries as the model's calls.
	offered, called []string
}

var wireCases = []wireCase{
	{name: "chat completions (gpt-4o-mini, ralph's tools)", path: "/v1/chat/completions",
		env: func(t *testing.T, srv *llmtest.Server) []string { return cleanEnv(t, "OPENAI_BASE_URL="+srv.URL) },
		calls: `[{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"alpha\\n\"}"},
			{"name":"run_command","arguments":"{\"command\":\"cat a.txt\"}"}]`,
		offered: []string{`"name":"run_command"`, `"name":"write_file"`}, called: []string{`"name":"write_file"`, `"name":"run_command"`}},
	{name: "Messages API (claude-sonnet-4-5, Claude Code's tools)", path: "/v1/messages",
		env: func(t *testing.T, srv *llmtest.Server) []string {
			return anthropicEnv(t, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL, "/v1"))
		},
		args: []string{"--model", "claude-sonnet-4-5"},
		calls: `[{"name":"Write","arguments":"{\"file_path\":\"a.txt\",\"content\":\"alpha\\n\"}"},
			{"name":"Bash","arguments":"{\"command\":\"cat a.txt\",\"description\":\"Show a.txt\"}"}]`,
		offered: []string{`"name":"Bash"`, `"name":"Write"`, `"name":"TodoWrite"`}, called: []string{`"name":"Write"`, `"name":"Bash"`}},
	{name: "Responses API (gpt-5-codex, codex's tools)", path: "/v1/responses",
		env: func(t *testing.T, srv *llmtest.Server) []string {
			return cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=gpt-5-codex")
		},
		calls: `[{"type":"custom","name":"apply_patch","arguments":"*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n"},
			{"name":"shell_command","arguments":"{\"command\":\"cat a.txt\",\"workdir\":\".\"}"}]`,
		offered: []string{`"type":"custom","name":"apply_patch"`, `"name":"shell_command"`, `"name":"update_plan"`},
		called:  []string{`"type":"custom_tool_call"`, `"name":"shell_command"`}},
}

// reasoning is the first turn's reasoning, which the Responses API gives
// back encrypted and ralph must send back with the next request.
const wireReasoning = "**Planning** write a.txt, then check it."

// TestEachWireRunsToolsContinuesAndCompacts drives a chat on each of the
// three APIs, each with a model of another family: a turn of two tool
// calls in the model's own terms (run, and recorded under ralph's names),
// the next request carrying them and their results (and, on the
// Responses API, the first turn's reasoning, byte for byte, before the
// call that followed it), /compact, a message after it, and `ralph chat
// -c` going on; the stand-in refuses what each real API refuses.
func TestEachWireRunsToolsContinuesAndCompacts(t *testing.T) {
	t.Parallel()
	sum, _ := json.Marshal(compactSummary)
	for _, w := range wireCases {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := inlineServer(t, `{"name":"wire","responses":[
				{"reasoning":"`+wireReasoning+`","tool_calls":`+w.calls+`},
				{"text":"Wrote a.txt; it says alpha."},
				{"text":"Second answer."},
				{"text":`+string(sum)+`},
				{"text":"Third answer."},
				{"text":"Fourth answer."}]}`)
			dir := t.TempDir()
			env := w.env(t, srv)
			in := "write a.txt and show it\nsecond question\n/compact keep the file\nthird question\n"
			r := ralph(t, dir, env, strings.NewReader(in), append(append([]string{}, w.args...), "--yes", "chat")...)
			if r.code != 0 {
				t.Fatalf("chat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := readFileT(t, filepath.Join(dir, "a.txt")); got != "alpha\n" {
				t.Fatalf("a.txt = %q\n%s%s", got, r.stdout, r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 5 {
				t.Fatalf("%d requests, want 5\n%s%s", len(reqs), r.stdout, r.stderr)
			}
			for _, req := range reqs {
				if req.Path != w.path {
					t.Fatalf("a request went to %s, want %s", req.Path, w.path)
				}
			}
			first, second := string(reqs[0].Body), string(reqs[1].Body)
			for _, want := range w.offered {
				if !strings.Contains(first, want) {
					t.Errorf("the first request does not offer %s:\n%.3000s", want, first)
				}
			}
			for _, want := range w.called {
				if !strings.Contains(second, want) {
					t.Errorf("the second request does not carry the model's call %s:\n%.3000s", want, second)
				}
			}
			if !strings.Contains(second, "alpha") {
				t.Errorf("the second request lacks the command's output")
			}
			if w.path == "/v1/responses" {
				checkReasoningCarried(t, reqs[1], llmtest.EncryptedContent(wireReasoning, 0), "custom_tool_call")
				// The turns /compact summarised went with their reasoning;
				// the exchange it kept keeps its own.
				items, _ := reqs[4].InputItems()
				for _, it := range items {
					if it.EncryptedContent != nil && *it.EncryptedContent == llmtest.EncryptedContent(wireReasoning, 0) {
						t.Errorf("the request after /compact still carries a summarised turn's reasoning")
					}
				}
			}
			// The request after /compact carries the summary.
			if next := string(reqs[4].Body); strings.Contains(next, "write a.txt and show it") || !strings.Contains(next, summaryWords) {
				t.Fatalf("the request after /compact is not the summary and the last exchange:\n%.3000s", next)
			}
			// The records keep ralph's names of the tools.
			sess := onlySession(t, dir)
			msgs := readFileT(t, filepath.Join(sess, "messages.jsonl"))
			events := readFileT(t, filepath.Join(sess, "events.jsonl"))
			for _, bad := range []string{`"name":"Bash"`, `"name":"Write"`, `"name":"shell_command"`} {
				if strings.Contains(msgs, bad) || strings.Contains(events, `"tool_name":`+strings.TrimPrefix(bad, `"name":`)) {
					t.Errorf("the records name a tool %s, not ralph's name", bad)
				}
			}
			if !strings.Contains(events, `"tool_name":"run_command"`) {
				t.Errorf("events.jsonl does not record run_command")
			}

			r = ralph(t, dir, env, strings.NewReader("fourth question\n"), append(append([]string{}, w.args...), "--yes", "chat", "-c")...)
			if r.code != 0 || !strings.Contains(r.stdout, "Fourth answer.") {
				t.Fatalf("chat -c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			reqs = srv.Requests()
			if len(reqs) != 6 || !strings.Contains(string(reqs[5].Body), summaryWords) || !strings.Contains(string(reqs[5].Body), "third question") {
				t.Fatalf("ralph chat -c did not go on in the compacted conversation (%d requests)", len(reqs))
			}
		})
	}
}

// checkReasoningCarried checks that req gives back the reasoning item
// whose encrypted content is enc, right before an item of type next.
func checkReasoningCarried(t *testing.T, req llmtest.RecordedRequest, enc, next string) {
	t.Helper()
	items, err := req.InputItems()
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		if it.Type != "reasoning" {
			continue
		}
		if it.EncryptedContent == nil || *it.EncryptedContent != enc {
			t.Fatalf("a reasoning item came back with %v, want %s", it.EncryptedContent, enc)
		}
		if i+1 >= len(items) || items[i+1].Type != next {
			t.Fatalf("the reasoning item is not followed by the %s it came before: %s", next, req.Body)
		}
		return
	}
	t.Fatalf("the request does not give the first turn's reasoning back:\n%s", req.Body)
}
