package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Structured output (--output-schema FILE, --json-schema JSON): the final
// answer conforms to a JSON Schema, on each of the three wires, as claude
// -p --json-schema and codex exec --output-schema make it.

// answerSchema has an optional property (note), which OpenAI's strict mode
// takes only as a nullable required one: the stand-in refuses the schema
// as written with strict on, as OpenAI does.
const answerSchema = `{"type":"object","properties":{"summary":{"type":"string"},"files":{"type":"integer"},"note":{"type":"string"}},"required":["summary","files"]}`

// schemaWireArgs are a wire case's arguments for a one-shot under the
// schema: on the Messages API with extended thinking on, which Anthropic
// refuses beside the forced answer tool, so ralph must turn it off there.
func schemaWireArgs(w wireCase, schemaFile string, extra ...string) []string {
	args := append([]string{}, w.args...)
	if w.path == "/v1/messages" {
		args = append(args, "--thinking-tokens", "2048")
	}
	return append(append(args, "--yes", "--output-schema", schemaFile), extra...)
}

// TestOutputSchemaOnEachWire: a one-shot with --output-schema works with
// tools on each wire and ends with the answer in the schema: exit 0,
// structured_output in the JSON result, the JSON on stdout in text. On
// OpenAI's wires every request carries the schema in strict form beside
// the tools (response_format, text.format); on the Messages API the agent
// works without it, and one last request forces the answer tool, with
// thinking off.
func TestOutputSchemaOnEachWire(t *testing.T) {
	t.Parallel()
	for _, w := range wireCases {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			final := `{"text":"{\"summary\":\"wrote a.txt\",\"files\":1,\"note\":null}"}`
			if w.path == "/v1/messages" {
				// Prose first, as a model not held to the schema writes;
				// the forced request's answer is the tool's input.
				final = `{"text":"I wrote a.txt."},{"text":"{\"summary\":\"wrote a.txt\",\"files\":1}"}`
			}
			srv := inlineServer(t, `{"name":"schema","responses":[{"tool_calls":`+w.calls+`},`+final+`]}`)
			dir := t.TempDir()
			schemaFile := filepath.Join(t.TempDir(), "answer.json")
			writeFileT(t, schemaFile, answerSchema)
			r := ralph(t, dir, w.env(t, srv), nil, schemaWireArgs(w, schemaFile, "--json", "write a.txt and show it")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			m := resultLine(t, r.stdout)
			got, _ := json.Marshal(m["structured_output"])
			if string(got) != `{"files":1,"summary":"wrote a.txt"}` || m["is_error"] != false || m["result"] != `{"files":1,"summary":"wrote a.txt"}` {
				t.Fatalf("result %v", m)
			}
			reqs := srv.Requests()
			switch w.path {
			case "/v1/messages":
				if len(reqs) != 3 {
					t.Fatalf("%d requests, want 3", len(reqs))
				}
				first, last := string(reqs[0].Body), string(reqs[2].Body)
				if !strings.Contains(first, `"thinking":{"type":"enabled"`) || strings.Contains(first, `"tool_choice"`) || strings.Contains(first, `"name":"StructuredOutput"`) {
					t.Errorf("the first request is not the agent's own, with thinking:\n%.1500s", first)
				}
				if !strings.Contains(last, `"tool_choice":{"type":"tool","name":"StructuredOutput"}`) || strings.Contains(last, `"thinking":{"type":"enabled"`) ||
					!strings.Contains(last, `"name":"StructuredOutput"`) || !strings.Contains(last, `"input_schema":{"type":"object","properties":{"summary"`) {
					t.Errorf("the last request does not force the answer tool without thinking:\n%.600s\n…%s", last, last[max(0, len(last)-1500):])
				}
			default:
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2", len(reqs))
				}
				want := `"response_format":{"type":"json_schema","json_schema":{"name":"final_answer","schema":`
				if w.path == "/v1/responses" {
					want = `"text":{"format":{"type":"json_schema","name":"final_answer","schema":`
				}
				for i, req := range reqs {
					body := string(req.Body)
					if !strings.Contains(body, want) || !strings.Contains(body, `"strict":true`) || !strings.Contains(body, `"additionalProperties":false`) ||
						!strings.Contains(body, `"note":{"type":["string","null"]}`) {
						t.Errorf("request %d does not carry the strict schema:\n%.3000s", i+1, body)
					}
				}
			}
			if got := readFileT(t, filepath.Join(dir, "a.txt")); got != "alpha\n" {
				t.Errorf("the tools did not run: a.txt = %q", got)
			}
		})
	}
}

// TestOutputSchemaPrintsTheJSONAnswer: in text output the answer printed
// is the JSON, one line a script can read with jq.
func TestOutputSchemaPrintsTheJSONAnswer(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"schema-text","responses":[{"text":"{\"summary\":\"ok\",\"files\":0,\"note\":\"fine\"}"}]}`)
	r := ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), nil, "--json-schema", answerSchema, "summarise")
	if r.code != 0 || r.stdout != `{"files":0,"note":"fine","summary":"ok"}`+"\n" {
		t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestOutputSchemaNonConformingAnswerIsRetriedThenFails: an answer that
// does not conform is asked for again once, telling the model the
// validation error, with no tool call wanted; a second one that does not
// conform ends the run with exit 1 and the validation message, on each
// wire.
func TestOutputSchemaNonConformingAnswerIsRetriedThenFails(t *testing.T) {
	t.Parallel()
	for _, w := range wireCases {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			answers := `{"text":"{\"summary\":3}"},{"text":"{\"summary\":\"still no files\"}"}`
			want, forced := 2, `"tool_choice":"none"`
			if w.path == "/v1/messages" {
				answers = `{"text":"Done, nothing to report."},` + answers
				want, forced = 3, `"tool_choice":{"type":"tool","name":"StructuredOutput"}`
			}
			srv := inlineServer(t, `{"name":"schema-retry","responses":[`+answers+`]}`)
			schemaFile := filepath.Join(t.TempDir(), "answer.json")
			writeFileT(t, schemaFile, answerSchema)
			r := ralph(t, t.TempDir(), w.env(t, srv), nil, schemaWireArgs(w, schemaFile, "--json", "summarise")...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			m := resultLine(t, r.stdout)
			msg, _ := m["error"].(string)
			if m["is_error"] != true || !strings.Contains(msg, "does not conform to the output schema") || !strings.Contains(msg, "files") || m["structured_output"] != nil {
				t.Fatalf("result %v", m)
			}
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); !strings.Contains(lines[len(lines)-1], "does not conform to the output schema") {
				t.Errorf("stderr does not end with the validation message:\n%s", r.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != want {
				t.Fatalf("%d requests, want %d", len(reqs), want)
			}
			retry := string(reqs[want-1].Body)
			if !strings.Contains(retry, "does not conform to the output schema") || !strings.Contains(retry, forced) {
				t.Errorf("the retry does not tell the model why, or lets it call tools:\n…%s", retry[max(0, len(retry)-2500):])
			}
		})
	}
}

// TestOutputSchemaBadSchemaExitsTwo: a schema that cannot be read or is
// no JSON Schema is one sentence and exit 2 before any model call, with
// the error result object under --json.
func TestOutputSchemaBadSchemaExitsTwo(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"never","responses":[{"text":"unreachable"}]}`)
	tmp := t.TempDir()
	broken := filepath.Join(tmp, "broken.json")
	writeFileT(t, broken, `{"type":"object",`)
	typo := filepath.Join(tmp, "typo.json")
	writeFileT(t, typo, `{"type":"objekt"}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--output-schema", broken}, "is not JSON"},
		{[]string{"--output-schema", typo}, `"type" names "objekt"`},
		{[]string{"--output-schema", filepath.Join(tmp, "missing.json")}, "cannot read"},
		{[]string{"--json-schema", `[1]`}, "is not a JSON Schema"},
		{[]string{"--json-schema", answerSchema, "--output-schema", broken}, "give one"},
	} {
		r := ralph(t, t.TempDir(), cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), nil, append(append([]string{"--json"}, c.args...), "summarise")...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", c.args, r.code, r.stderr)
			continue
		}
		if m := resultLine(t, r.stdout); m["is_error"] != true || !strings.Contains(m["error"].(string), c.want) {
			t.Errorf("%v: result %v", c.args, m)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model requests for a bad schema", n)
	}
}

// TestOutputSchemaWithoutATaskIsNoChat: on a terminal, ralph with a
// schema and no task does not open the chat shell, whose answers no
// schema shapes: one sentence asking for the task, exit 2.
func TestOutputSchemaWithoutATaskIsNoChat(t *testing.T) {
	t.Parallel()
	srv := inlineServer(t, `{"name":"never","responses":[{"text":"unreachable"}]}`)
	r := startPTY(t, t.TempDir(), cleanEnv(t, "OPENAI_BASE_URL="+srv.URL), "--json-schema", answerSchema)
	r.expectExit(2, 20*time.Second)
	if s := r.screen(); !strings.Contains(s, "shape a one-shot's final answer: give the task") {
		t.Fatalf("the screen shows:\n%s", s)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model requests", n)
	}
}
