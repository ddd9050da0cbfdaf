package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCleanSchema(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`null`, `{"properties":{},"type":"object"}`},
		{`{"properties":{"a":{"type":"string"}},"required":["a","b"]}`, `{"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`},
		{`{"type":"object","properties":{"n":{"$ref":"#/definitions/N"}},"definitions":{"N":{"$ref":"#/definitions/N","description":"self"}}}`,
			`{"properties":{"n":{"description":"self"}},"type":"object"}`},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}}}`,
			`{"properties":{"v":{"default":null,"type":"string"}},"type":"object"}`},
		{`{"type":"object","properties":{"p":{"allOf":[{"$ref":"#/$defs/P"}]}},"$defs":{"P":{"properties":{"x":{"type":"integer","format":"int64"}}}}}`,
			`{"properties":{"p":{"properties":{"x":{"type":"integer"}},"type":"object"}},"type":"object"}`},
		{`{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}]},"d":{"type":"string","format":"date-time"}}}`,
			`{"properties":{"d":{"format":"date-time","type":"string"},"t":{"items":{"type":"string"},"type":"array"}},"type":"object"}`},
	} {
		var in any
		if err := json.Unmarshal([]byte(c.in), &in); err != nil {
			t.Fatal(err)
		}
		if got := string(CleanSchema(in)); got != c.want {
			t.Errorf("CleanSchema(%s)\n = %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestToolNames(t *testing.T) {
	if n := ToolName("gh", "get_issue"); n != "mcp__gh__get_issue" {
		t.Fatalf("plain: %s", n)
	}
	long := ToolName("server", strings.Repeat("x", 80))
	if len(long) != 64 || !strings.HasPrefix(long, "mcp__server__xxx") {
		t.Fatalf("long: %s (%d)", long, len(long))
	}
	names := toolNames("s", []string{"a.b", "a_b", "a/b"})
	if names[1] != "mcp__s__a_b" || names[0] == names[2] || names[0] == names[1] || !strings.HasPrefix(names[0], "mcp__s__a_b_") {
		t.Fatalf("names = %q", names)
	}
}

func TestResultText(t *testing.T) {
	r := resultText(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "plain"}}, StructuredContent: map[string]any{"k": 1}, IsError: true})
	if r.Output != "plain\nstructured content:\n{\"k\":1}" || !r.IsError {
		t.Fatalf("result %+v", r)
	}
	r = resultText(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "{\n  \"k\": 1\n}"}}, StructuredContent: map[string]any{"k": 1}})
	if r.Output != "{\n  \"k\": 1\n}" {
		t.Fatalf("the same JSON twice: %q", r.Output)
	}
	r = resultText(&sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///a", Name: "a"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b", Text: "bee"}}}})
	if r.Output != "[resource link: file:///a a]\n[resource file:///b]\nbee" {
		t.Fatalf("resources: %q", r.Output)
	}
	if r := resultText(&sdk.CallToolResult{}); r.Output != "(no output)" {
		t.Fatalf("empty: %q", r.Output)
	}
}
