package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/workers"
)

// resultText turns a tool's result into what the model reads: text as it
// is, images and audio as a note (ralph's model calls carry text only),
// resources by their text or as a note, and structured content as JSON
// unless a text part already holds the same JSON. The Toolset cuts it to
// the same size as a command's output, marking the cut the same way.
func resultText(r *sdk.CallToolResult) workers.Result {
	var parts []string
	var texts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %s — not shown: ralph passes only text to the model]", orUnknown(c.MIMEType), size(len(c.Data))))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s — not shown: ralph passes only text to the model]", orUnknown(c.MIMEType), size(len(c.Data))))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s%s]", c.URI, labelled(" ", c.Name), labelled(", ", c.MIMEType)))
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
			} else {
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %s — binary, not shown]", c.Resource.URI, orUnknown(c.Resource.MIMEType), size(len(c.Resource.Blob))))
			}
		default:
			if data, err := json.Marshal(c); err == nil {
				parts = append(parts, string(data))
			}
		}
	}
	if r.StructuredContent != nil {
		if data, err := json.Marshal(r.StructuredContent); err == nil && !holdsJSON(texts, data) {
			parts = append(parts, "structured content:\n"+string(data))
		}
	}
	out := strings.Join(parts, "\n")
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	return workers.Result{Output: strings.ToValidUTF8(out, "\uFFFD"), IsError: r.IsError}
}

// holdsJSON reports whether one of texts is the JSON data, written
// however compactly: servers that return structured content usually put
// the same JSON in a text part for older clients.
func holdsJSON(texts []string, data []byte) bool {
	for _, t := range texts {
		var b bytes.Buffer
		if json.Compact(&b, []byte(t)) == nil && bytes.Equal(b.Bytes(), data) {
			return true
		}
		var x, y any
		if json.Unmarshal([]byte(t), &x) == nil && json.Unmarshal(data, &y) == nil {
			a, _ := json.Marshal(x)
			c, _ := json.Marshal(y)
			if bytes.Equal(a, c) {
				return true
			}
		}
	}
	return false
}

func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func labelled(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
