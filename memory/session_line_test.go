package memory

import (
	"encoding/json"
	"reflect"
	"testing"
)

// linesToDecode are lines of messages.jsonl of every shape: the plain
// ones decodeLine reads itself and those it leaves to encoding/json.
var linesToDecode = []string{
	`{"role":"system","content":"You are ralph.","seq":1}`,
	`{"role":"user","content":"say hi","seq":2}`,
	`{"role":"assistant","content":"hi","seq":3}`,
	`{"role":"assistant","tool_calls":[{"id":"c1","name":"read_file","arguments":"{\"path\":\"a.go\"}"},{"id":"c2","name":"run_command","arguments":""}],"seq":4}`,
	`{"role":"tool","content":"line\none\ttab \u003c\u0026\u003e \u00e9 \ud83d\ude00 \ud800 \udc00x \\ \/ \" \b\f\r","tool_call_id":"c1","name":"read_file","seq":5}`,
	`{"role":"user","content":"é 日本 🙂","seq":0}`,
	`{"role":"user","content":"x"}`,
	`{}`,
	`{"role":"user","content":"bad utf-8 ` + "\xff\xfe" + `"}`,
	`{"role":"user","refused":"too long"}`,
	`{"role":"user","content":"summary","compacted":{"kept":2,"before_tokens":9,"after_tokens":3,"cause":"command"},"seq":9}`,
	`{"role":"assistant","content":"x","seq":3,"opaque":[{"provider":"anthropic","block":{"type":"thinking"}}]}`,
	`{"role":"tool","content":"img","images":[{"name":"a.png","media_type":"image/png","ref":"images/x.png"}]}`,
	`{"Role":"user","CONTENT":"case"}`,
	`{ "role": "user" }`,
	`{"role":"user"} `,
	`{"role":"user","role":"assistant"}`,
	`{"role":"user","tool_calls":[]}`,
	`{"role":"user","tool_calls":null}`,
	`{"role":"user","content":null}`,
	`{"role":"user","seq":-1}`,
	`{"role":"user","seq":01}`,
	`{"role":"user","seq":1.5}`,
	`{"role":"user","seq":1e2}`,
	`{"role":"user","seq":99999999999999999999}`,
	`{"role":"user","tool_calls":[{"id":"a","id":"b"}]}`,
	`{"role":"user","tool_calls":[{"id":"a","extra":"b"}]}`,
	`{"role":"user","content":"tab	raw"}`,
	`{"role":"user","content":"bad \x escape"}`,
	`{"role":"user","content":"bad \u12 escape"}`,
	`{"role":"user","content":"\'"}`,
	`{"role":"user","content":"torn`,
	`{"role":"user",}`,
	`{"role":"user"}}`,
	`{"role":"user"`,
	`[1]`,
	``,
	`null`,
}

// TestDecodeLineIsUnmarshal: every line reads as json.Unmarshal reads
// it, or fails where it fails.
func TestDecodeLineIsUnmarshal(t *testing.T) {
	t.Parallel()
	plain := 0
	for _, line := range linesToDecode {
		checkDecodeLine(t, line)
		var l seqLine
		if plainLine([]byte(line), &l) {
			plain++
		}
	}
	// The common shapes are read without encoding/json.
	if plain < 8 {
		t.Errorf("only %d lines were read as plain", plain)
	}
}

// FuzzDecodeLineIsUnmarshal: whatever a line holds, decodeLine reads it
// as json.Unmarshal does.
func FuzzDecodeLineIsUnmarshal(f *testing.F) {
	for _, line := range linesToDecode {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) { checkDecodeLine(t, line) })
}

func checkDecodeLine(t *testing.T, line string) {
	t.Helper()
	var got, want seqLine
	gerr := decodeLine([]byte(line), &got)
	werr := json.Unmarshal([]byte(line), &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%q: decodeLine's error %v, json.Unmarshal's %v", line, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", line, got, want)
	}
}
