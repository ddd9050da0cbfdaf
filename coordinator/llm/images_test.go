package llm

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// imageTurn is a conversation whose tool result carries a PNG, then the
// person's next words.
func imageTurn(data []byte) []conversation.Message {
	img := conversation.NewImage("shot.png", "image/png", data, 2, 1)
	return []conversation.Message{
		{Role: conversation.RoleSystem, Content: "sys"},
		{Role: conversation.RoleUser, Content: "look at shot.png"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
			{ID: "c1", Name: "read_file", Arguments: `{"path":"shot.png"}`}, {ID: "c2", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		{Role: conversation.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "[shot.png: PNG image, 2×1 px]", Images: []conversation.Image{img}},
		{Role: conversation.RoleTool, ToolCallID: "c2", Name: "read_file", Content: "[a.txt: lines 1-1 of 1]\nx\n"},
	}
}

func TestAcceptsImagesByFamily(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]bool{
		"gpt-4o": true, "gpt-4o-mini": true, "gpt-5-codex": true, "o3": true, "o3-mini": false, "o1-mini": false, "gpt-3.5-turbo": false,
		"claude-sonnet-4-5": true, "anthropic/claude-sonnet-4.5": true, "claude-2.1": false, "gemini-2.5-flash": true,
		"qwen2.5-coder": false, "llava:13b": true, "ollama/llama3.2-vision": true, "deepseek-coder": false, "unknown": false,
	} {
		if got := AcceptsImages(model); got != want {
			t.Errorf("AcceptsImages(%q) = %v, want %v", model, got, want)
		}
	}
}

func TestImagesOnChatCompletionsFollowTheToolResults(t *testing.T) {
	t.Parallel()
	data := []byte("\x89PNG\r\n\x1a\nnot really")
	msgs := imageTurn(data)
	o := toOpenAI(New(Config{BaseURL: "http://localhost:1/v1"}), Request{Model: "gpt-4o", Messages: msgs})
	if n := len(o.Messages); n != 6 {
		t.Fatalf("%d messages, want the five and a user message of images after the tool results", n)
	}
	if o.Messages[3].Role != "tool" || o.Messages[4].Role != "tool" || o.Messages[3].Content != "[shot.png: PNG image, 2×1 px]" {
		t.Fatalf("tool messages %+v", o.Messages[3:5])
	}
	last := o.Messages[5]
	b, _ := json.Marshal(last)
	want := `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(data) + `"}}`
	if last.Role != "user" || !strings.Contains(string(b), want) || !strings.Contains(string(b), "The image shot.png") {
		t.Fatalf("the images' message %s\nwant an image_url part %s", b, want)
	}
	// The person's next message takes the images, so roles alternate.
	msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "what is in it?"})
	o = toOpenAI(New(Config{BaseURL: "http://localhost:1/v1"}), Request{Model: "gpt-4o", Messages: msgs})
	if n := len(o.Messages); n != 6 || len(o.Messages[5].MultiContent) != 3 || o.Messages[5].MultiContent[2].Text != "what is in it?" {
		t.Fatalf("messages %+v", o.Messages)
	}
	// A model that takes no images reads a sentence in the result.
	o = toOpenAI(New(Config{BaseURL: "http://localhost:1/v1"}), Request{Model: "qwen2.5-coder", Messages: imageTurn(data)})
	if n := len(o.Messages); n != 5 || !strings.Contains(o.Messages[3].Content, "this model does not accept images, so shot.png was not shown to it") {
		t.Fatalf("messages %+v", o.Messages)
	}
	if b, _ := json.Marshal(o); strings.Contains(string(b), "image_url") {
		t.Fatalf("a model without images was sent one: %s", b)
	}
	if msgs[3].Images[0].Data == nil || msgs[3].Content != "[shot.png: PNG image, 2×1 px]" {
		t.Fatal("encoding changed the history")
	}
}

func TestImagesOnTheMessagesAPIGoInsideTheToolResult(t *testing.T) {
	t.Parallel()
	data := []byte("\x89PNG\r\n\x1a\nnot really")
	body, err := messagesBody(New(messagesConfig()), Request{Model: "claude-sonnet-4-5", Messages: imageTurn(data)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"[shot.png: PNG image, 2×1 px]"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(data) + `"}}]}`
	if !strings.Contains(string(body), want) {
		t.Fatalf("body %s\nwant the tool_result %s", body, want)
	}
	if !strings.Contains(string(body), `{"type":"tool_result","tool_use_id":"c2","content":"[a.txt: lines 1-1 of 1]\nx\n"`) {
		t.Fatalf("the text result changed: %s", body)
	}
	// A model that takes no images, and an image whose bytes are gone.
	body, _ = messagesBody(New(messagesConfig()), Request{Model: "claude-2.1", Messages: imageTurn(data)})
	if strings.Contains(string(body), `"image"`) || !strings.Contains(string(body), "this model does not accept images") {
		t.Fatalf("body %s", body)
	}
	gone := imageTurn(data)
	gone[3].Images[0].Data = nil
	body, _ = messagesBody(New(messagesConfig()), Request{Model: "claude-sonnet-4-5", Messages: gone})
	if strings.Contains(string(body), `"image"`) || !strings.Contains(string(body), "is no longer kept in this session") {
		t.Fatalf("body %s", body)
	}
}
