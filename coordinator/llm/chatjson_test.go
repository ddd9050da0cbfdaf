package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// TestChatMessagesEncodeAsGoOpenAI: the messages ralph encodes itself
// are byte for byte what go-openai writes for them, in every shape a
// request has (text, tool calls and results, names, parts, a legacy
// function call) and with every kind of character JSON escapes.
func TestChatMessagesEncodeAsGoOpenAI(t *testing.T) {
	t.Parallel()
	zero, two := 0, 2
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You are ralph.\n\tBe <brief> & \"exact\" \\ here."},
		{Role: "user", Content: "say hi"},
		{Role: "assistant", Content: ""},
		{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a<b>.go"}`}},
			{Type: openai.ToolTypeFunction, Function: openai.FunctionCall{}},
			{Index: &two, ID: "c3", Type: "", Function: openai.FunctionCall{Arguments: "{}"}},
			{Index: &zero, Function: openai.FunctionCall{Name: "x"}},
		}},
		{Role: "tool", Content: "ok", ToolCallID: "c1", Name: "read_file"},
		{Role: "assistant", Content: "thinking", ReasoningContent: "why", Refusal: "no"},
		{Role: "user", Content: "bad \xff\xfe utf-8, \u2028 and \u2029, \x00\x01\x1f\x7f, \b\f\r, é 日本 🙂"},
		{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "<look>"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA", Detail: openai.ImageURLDetailAuto}}}},
		{Role: "user", MultiContent: []openai.ChatMessagePart{}},
		{Role: "assistant", FunctionCall: &openai.FunctionCall{Name: "f", Arguments: "{}"}},
		{},
	}
	for i := range msgs {
		got, err := encodeChatMessages(msgs[i : i+1])
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		want, err := json.Marshal(msgs[i : i+1])
		if err != nil {
			t.Fatalf("message %d: go-openai: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("message %d:\n got %s\nwant %s", i, got, want)
		}
	}
	got, err := encodeChatMessages(msgs)
	want, werr := json.Marshal(msgs)
	if err != nil || werr != nil || !bytes.Equal(got, want) {
		t.Errorf("all messages: %v %v\n got %s\nwant %s", err, werr, got, want)
	}
	if got, err := encodeChatMessages(nil); err != nil || string(got) != "[]" {
		t.Errorf("no messages: %s %v", got, err)
	}
	// A message go-openai refuses is refused here too.
	if _, err := encodeChatMessages([]openai.ChatCompletionMessage{{Role: "user", Content: "a", MultiContent: []openai.ChatMessagePart{}}}); err == nil {
		t.Error("a message with both content and parts was encoded")
	}
}

// FuzzJSONStringAsEncodingJSON: appendJSONString escapes every string as
// json.Marshal does.
func FuzzJSONStringAsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\"\\/", "\x00\x1f\x7f", "\xff", "\xe2\x80", "\u2028\u2029", "日本🙂", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Errorf("%q:\n got %s\nwant %s", s, got[1:], want)
		}
	})
}

// TestChatRequestBodyIsGoOpenAIs: the body a chat completions request
// sends, its messages spliced in beside the tools, is the body go-openai
// would have written for the whole request.
func TestChatRequestBodyIsGoOpenAIs(t *testing.T) {
	t.Parallel()
	bodies := make(chan []byte, 1)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			select {
			case bodies <- b: // the first request's, the chat request
			default:
			}
		}
		return nil, fmt.Errorf("no network in this test")
	})}
	c := New(Config{BaseURL: "http://model.invalid/v1", HTTPClient: hc, MaxAttempts: 1})
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "sys <&>"},
		{Role: conversation.RoleUser, Content: "read it"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: conversation.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "text\n"},
		{Role: conversation.RoleAssistant, Content: strings.Repeat("long answer ", 100)},
		{Role: conversation.RoleUser, Content: "more"},
	}
	tools := []conversation.ToolDef{{Name: "read_file", Description: "Reads.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	req := Request{Model: "m", Messages: msgs, Tools: tools}
	_, _ = c.Stream(t.Context(), req, nil)
	got := <-bodies
	w := c.wire.(*chatWire)
	o := w.toOpenAI(c, req)
	o.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file", Description: "Reads.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	whole, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var g, wv any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("the body sent is no JSON: %v: %s", err, got)
	}
	_ = json.Unmarshal(whole, &wv)
	gs, _ := json.Marshal(g)
	ws, _ := json.Marshal(wv)
	if !bytes.Equal(gs, ws) {
		t.Errorf("the body sent:\n%s\ngo-openai's:\n%s", got, whole)
	}
	want, _ := json.Marshal(o.Messages)
	if !bytes.Contains(got, append([]byte(`"messages":`), want...)) {
		t.Errorf("the messages sent are not go-openai's bytes:\n%s\nwant %s", got, want)
	}
}

// roundTripFunc is a RoundTripper of one function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkChatMessages401 measures encoding the messages of a request
// continuing a session of 401 (a system prompt, then 200 prompts and
// answers): go-openai's encoding, and ralph's own that replaced it.
func BenchmarkChatMessages401(b *testing.B) {
	msgs := []openai.ChatCompletionMessage{{Role: "system", Content: strings.Repeat("You are ralph, a coding agent. ", 300)}}
	for i := 0; i < 200; i++ {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: "user", Content: "say hi again"}, openai.ChatCompletionMessage{Role: "assistant", Content: "hi"})
	}
	b.Run("go-openai", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ralph", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeChatMessages(msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSplicedBodyReadsTheSameEachTime: a body the tap rewrote gives the
// same bytes, and as many as its ContentLength says, to the first reading
// and to every reading GetBody starts (a transport's retry of a request
// on a connection that went away); and the tools field follows an empty
// object without a comma.
func TestSplicedBodyReadsTheSameEachTime(t *testing.T) {
	t.Parallel()
	tools := []byte(`[{"type":"function","function":{"name":"read_file"}}]`)
	for _, tc := range []struct{ body, msgs, want string }{
		{`{"model":"m","messages":null,"stream":true}`, `[{"role":"user","content":"hi"}]`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"tools":` + string(tools) + `}`},
		{"{ \n}", "", "{ \n\"tools\":" + string(tools) + "}"},
	} {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/chat/completions", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var msgs []byte
		if tc.msgs != "" {
			msgs = []byte(tc.msgs)
		}
		r, err := withMessagesAndTools(req, msgs, tools)
		if err != nil {
			t.Fatal(err)
		}
		first, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		again := func() []byte {
			rc, err := r.GetBody()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		for i, got := range [][]byte{first, again(), again()} {
			if string(got) != tc.want || int64(len(got)) != r.ContentLength {
				t.Errorf("reading %d of %q: %q (%d bytes, ContentLength %d), want %q", i, tc.body, got, len(got), r.ContentLength, tc.want)
			}
		}
	}
}
