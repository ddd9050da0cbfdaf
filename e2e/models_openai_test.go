package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// OpenAI's coding models, as OpenAI serves them: every codex model only
// on the Responses API (chat completions answers 404, which the stand-in
// copies), GPT-5's reasoning carried between tool calls, each offered
// codex's tools.

// TestCodexModelsRunOnTheResponsesAPI: a gpt-5-codex and a
// gpt-5.1-codex-mini one-shot complete against a server that refuses
// them on chat completions, offered codex's shell_command and freeform
// apply_patch, and every request goes to the Responses API.
func TestCodexModelsRunOnTheResponsesAPI(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"gpt-5-codex", "gpt-5.1-codex-mini"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			srv := inlineServer(t, `{"name":"codex","responses":[
				{"reasoning":"**Planning** add hello.txt","tool_calls":[{"type":"custom","name":"apply_patch","arguments":"*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"}]},
				{"tool_calls":[{"name":"shell_command","arguments":"{\"command\":\"cat hello.txt\",\"timeout_ms\":10000}"}]},
				{"text":"Added hello.txt."}]}`)
			dir := t.TempDir()
			r := ralph(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL="+model), nil, "--yes", "--output-format", "json", "create hello.txt containing hi")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if m := resultLine(t, r.stdout); m["result"] != "Added hello.txt." || m["is_error"] != false {
				t.Fatalf("result %v", m)
			}
			if got := readFileT(t, filepath.Join(dir, "hello.txt")); got != "hi\n" {
				t.Fatalf("hello.txt = %q", got)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			for _, req := range reqs {
				if req.Path != "/v1/responses" {
					t.Fatalf("a request for %s went to %s", model, req.Path)
				}
			}
			body := string(reqs[0].Body)
			for _, want := range []string{`"type":"custom","name":"apply_patch"`, `"syntax":"lark"`, `"name":"shell_command"`, `"name":"update_plan"`,
				`"name":"view_image"`, `"store":false`, `"include":["reasoning.encrypted_content"]`, `"prompt_cache_key":"`} {
				if !strings.Contains(body, want) {
					t.Errorf("the first request lacks %s", want)
				}
			}
			for _, unwanted := range []string{`"name":"run_command"`, `"name":"read_file"`, `"name":"edit_file"`} {
				if strings.Contains(body, unwanted) {
					t.Errorf("%s is offered %s beside codex's tools", model, unwanted)
				}
			}
			checkReasoningCarried(t, reqs[1], llmtest.EncryptedContent("**Planning** add hello.txt", 0), "custom_tool_call")
			if items, _ := reqs[2].InputItems(); len(items) == 0 || !strings.Contains(string(reqs[2].Body), `"type":"function_call_output"`) {
				t.Errorf("the third request lacks shell_command's output: %s", reqs[2].Body)
			}
		})
	}
}

// TestGPT5CarriesItsReasoningAndPatchesThroughItsShell: gpt-5 on the
// Responses API (wire = "responses", as on OpenAI's own endpoint) gives
// the first response's reasoning back with its next request, is offered
// codex's shell with an argv, and a patch it runs through that shell is
// ralph's apply_patch (written, and recorded as apply_patch).
func TestGPT5CarriesItsReasoningAndPatchesThroughItsShell(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"gpt5","responses":[
		{"reasoning":"**Plan** patch then list","tool_calls":[{"name":"shell","arguments":"{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Add File: notes/b.txt\\n+beta\\n*** End Patch\\n\"],\"workdir\":\".\"}"}]},
		{"reasoning":"**Check**","tool_calls":[{"name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls notes | wc -l\"]}"}]},
		{"text":"Done."},
		{"text":"Still done."}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=gpt-5")
	userConfig(t, env, "wire = \"responses\"\n")
	r := ralph(t, dir, env, nil, "--yes", "--output-format", "json", "add notes/b.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "notes", "b.txt")); got != "beta\n" {
		t.Fatalf("notes/b.txt = %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := string(reqs[0].Body)
	if !strings.Contains(first, `"name":"shell"`) || !strings.Contains(first, `"type":"array"`) || strings.Contains(first, `"name":"apply_patch"`) {
		t.Errorf("gpt-5 is not offered codex's shell with an argv and no apply_patch tool:\n%.2000s", first)
	}
	checkReasoningCarried(t, reqs[1], llmtest.EncryptedContent("**Plan** patch then list", 0), "function_call")
	// Both turns' reasoning goes back with the third request.
	items, err := reqs[2].InputItems()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range items {
		if it.Type == "reasoning" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the third request gives back %d reasoning items, want 2", n)
	}
	// The session's record keeps the reasoning: ralph -c gives it back.
	r = ralph(t, dir, env, nil, "--yes", "-c", "is it still there?")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Still done." {
		t.Fatalf("-c: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs = srv.Requests()
	checkReasoningCarried(t, reqs[3], llmtest.EncryptedContent("**Plan** patch then list", 0), "function_call")
	if !strings.Contains(string(reqs[3].Body), llmtest.EncryptedContent("**Check**", 1)) {
		t.Errorf("ralph -c does not give back the second turn's reasoning")
	}
	msgs := readFileT(t, filepath.Join(onlySession(t, dir), "messages.jsonl"))
	if !strings.Contains(msgs, `"name":"apply_patch"`) || !strings.Contains(msgs, `"name":"run_command"`) || strings.Contains(msgs, `"name":"shell"`) {
		t.Errorf("the records do not name the patch apply_patch and the command run_command:\n%s", msgs)
	}
}

// onlyOnResponses is OpenAI's refusal of a Responses-only model on chat
// completions, as its body is.
const onlyOnResponses = `{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}`

// TestAModelChatRefusesMovesToTheResponsesAPIOnce: a model ralph does not
// know as Responses-only (a deployment's own name), refused by chat
// completions with OpenAI's 404, is asked again at once on the Responses
// API, which it stays on; the person is told once, in one line.
func TestAModelChatRefusesMovesToTheResponsesAPIOnce(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"moved","responses":[
		{"status":404,"body":`+jsonString(onlyOnResponses)+`},
		{"tool_calls":[{"name":"run_command","arguments":"{\"command\":\"true\"}"}]},
		{"text":"ok"}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=team-coder"), nil, "--yes", "say ok")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var paths []string
	for _, req := range srv.Requests() {
		paths = append(paths, req.Path)
	}
	if strings.Join(paths, " ") != "/v1/chat/completions /v1/responses /v1/responses" {
		t.Fatalf("requests went to %v", paths)
	}
	events := readFileT(t, filepath.Join(onlySession(t, dir), "events.jsonl"))
	if n := strings.Count(events, "only on OpenAI's Responses API"); n < 1 {
		t.Errorf("no event says the model moved to the Responses API:\n%s", events)
	}
}

// TestChatHeldByTheConfigNamesTheFix: with wire = "chat", a codex model
// is refused by chat completions and ralph says, in one sentence and
// exit 2 (the configuration's error, as a model the endpoint does not
// serve is), to set wire = "responses".
func TestChatHeldByTheConfigNamesTheFix(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"held","responses":[{"text":"never"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=gpt-5-codex")
	userConfig(t, env, "wire = \"chat\"\n")
	r := ralph(t, dir, env, nil, "say ok")
	if r.code != 2 || !strings.Contains(r.stderr, `wire = "responses"`) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, req := range srv.Requests() {
		if req.Path != "/v1/chat/completions" {
			t.Fatalf("a request went to %s under wire = \"chat\"", req.Path)
		}
	}
}

// TestToolFamilyOffersAFamilysToolsToAnyModel: tool_family = "codex"
// offers a model of any name (a deployment's own) codex's tools; on
// chat completions the freeform apply_patch is a function taking the
// patch as its input, and the patch it sends is applied.
func TestToolFamilyOffersAFamilysToolsToAnyModel(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"family","responses":[
		{"tool_calls":[{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Add File: c.txt\\n+gamma\\n*** End Patch\\n\"}"}]},
		{"text":"ok"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=team-coder-7")
	userConfig(t, env, "tool_family = \"codex\"\n")
	r := ralph(t, dir, env, nil, "--yes", "add c.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "c.txt")); got != "gamma\n" {
		t.Fatalf("c.txt = %q", got)
	}
	first := string(srv.Requests()[0].Body)
	if !strings.Contains(first, `"name":"shell_command"`) || !strings.Contains(first, `"name":"apply_patch"`) || strings.Contains(first, `"name":"run_command"`) {
		t.Fatalf("tool_family = \"codex\" does not offer codex's tools:\n%.3000s", first)
	}
	r = ralph(t, dir, env, nil, "config")
	if !strings.Contains(r.stdout, "tool_family") || !strings.Contains(r.stdout, "codex") {
		t.Errorf("ralph config does not list tool_family:\n%s", r.stdout)
	}
}

// TestAFallbackModelOfAnotherFamilyGetsItsOwnTools: the session's model
// (gpt-4o-mini, chat completions, ralph's tools) is unavailable, and the
// turn goes to its fallback gpt-5-codex, which is asked on the Responses
// API with codex's tools; its call is run and recorded under ralph's
// name, and the next turn, the session's model's again, is shown that
// call as ralph's run_command, without the codex model's reasoning.
func TestAFallbackModelOfAnotherFamilyGetsItsOwnTools(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"fallback","responses":[
		{"status":503,"body":"{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}"},
		{"reasoning":"**Plan** write f.txt","tool_calls":[{"name":"shell_command","arguments":"{\"command\":\"echo hi > f.txt\"}"}]},
		{"text":"done"}]}`)
	dir := t.TempDir()
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	userConfig(t, env, "max_retries = 0\nfallback_models = [\"gpt-5-codex\"]\n")
	r := ralph(t, dir, env, nil, "--yes", "write f.txt")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "done" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "f.txt")); got != "hi\n" {
		t.Fatalf("f.txt = %q", got)
	}
	reqs := srv.Requests()
	var paths []string
	for _, req := range reqs {
		paths = append(paths, req.Path)
	}
	if strings.Join(paths, " ") != "/v1/chat/completions /v1/responses /v1/chat/completions" {
		t.Fatalf("requests went to %v", paths)
	}
	if b := string(reqs[1].Body); !strings.Contains(b, `"name":"shell_command"`) || strings.Contains(b, `"name":"run_command"`) {
		t.Errorf("the fallback gpt-5-codex is not offered codex's tools:\n%.2000s", b)
	}
	last := string(reqs[2].Body)
	if !strings.Contains(last, `"function":{"name":"run_command","arguments":"{\"command\":\"echo hi `) ||
		strings.Contains(last, `"name":"shell_command"`) || strings.Contains(last, "enc_") {
		t.Errorf("the session's model is not shown the fallback's call as ralph's run_command, without its reasoning:\n%.3000s", last)
	}
}

// TestALongAnswerOnTheResponsesAPI: a 2,000-line answer streamed at full
// speed on the Responses API reaches a one-shot's stdout whole, in order,
// and its record.
func TestALongAnswerOnTheResponsesAPI(t *testing.T) {
	t.Parallel()
	answer := longAnswer(2000, 40)
	text, _ := json.Marshal(answer)
	srv := inlineServer(t, `{"name":"long","responses":[{"reasoning":"**Long**","text":`+string(text)+`,"chunk_size":3}]}`)
	dir := t.TempDir()
	r := ralph(t, dir, cleanEnv(t, "OPENAI_BASE_URL="+srv.URL, "RALPH_MODEL=gpt-5-codex"), nil, "write a lot")
	if r.code != 0 || strings.TrimRight(r.stdout, "\n") != strings.TrimRight(answer, "\n") {
		t.Fatalf("exit %d, %d bytes of %d on stdout\n%s", r.code, len(r.stdout), len(answer), r.stderr)
	}
	if rec := readFileT(t, filepath.Join(onlySession(t, dir), "messages.jsonl")); !strings.Contains(rec, "0000: func step0(x int)") || !strings.Contains(rec, "1998: func step1998(x int)") {
		t.Error("the answer is not in the session's record")
	}
}
