package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-dev/ralph/memory/text"
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
			if shown, ok := structured(data, r.Content, strings.Join(texts, "\n")); ok {
				parts = append(parts, "structured content:\n"+shown)
			}
		}
	}
	out := strings.Join(parts, "\n")
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	return workers.Result{Output: strings.ToValidUTF8(out, "\uFFFD"), IsError: r.IsError}
}

// structured is the structured content as the model reads it, and false
// when the content parts already hold all of it. Servers often repeat
// their content there: server-filesystem answers every call with
// {"content": <the text>}, and an image as {"content": [<the image
// block>]}, whose base64 would reach the model past the note that says
// the image is not shown, and double what a long result is cut to. So a
// value the parts hold is left out: a content block, a string a text
// part contains, the base64 of a binary part; what is left is shown with
// the long repeats replaced by a note.
func structured(data []byte, content []sdk.Content, text string) (string, bool) {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return string(data), true
	}
	d := dedup{text: text, blocks: map[string]bool{}, binary: map[string]string{}}
	for _, c := range content {
		if b, err := json.Marshal(c); err == nil {
			var x any
			if json.Unmarshal(b, &x) == nil {
				b, _ = json.Marshal(x)
				d.blocks[string(b)] = true
			}
		}
		switch c := c.(type) {
		case *sdk.ImageContent:
			d.binary[base64.StdEncoding.EncodeToString(c.Data)] = "[the image's data, not shown]"
		case *sdk.AudioContent:
			d.binary[base64.StdEncoding.EncodeToString(c.Data)] = "[the audio's data, not shown]"
		case *sdk.EmbeddedResource:
			if c.Resource != nil && len(c.Resource.Blob) > 0 {
				d.binary[base64.StdEncoding.EncodeToString(c.Resource.Blob)] = "[the resource's data, not shown]"
			}
		}
	}
	held, matched := d.held(v)
	if held && matched > 0 {
		return "", false
	}
	out, err := json.Marshal(d.trim(v))
	if err != nil {
		return string(data), true
	}
	return string(out), true
}

// dedup knows what a result's content parts hold.
type dedup struct {
	text   string            // the text parts, joined
	blocks map[string]bool   // each content block as compact JSON
	binary map[string]string // base64 of binary parts → the note shown instead
}

// repeatMin is how long a string must be to be replaced by a note when
// the rest of the structured content is shown: shorter ones cost less
// than the note.
const repeatMin = 200

// held reports whether the parts hold all of v, and how many of its
// values (strings, numbers, blocks) were found in them: flags alone
// (true, null) beside nothing the parts hold are not taken as held.
func (d dedup) held(v any) (bool, int) {
	switch x := v.(type) {
	case string:
		if _, ok := d.binary[x]; ok || (x != "" && strings.Contains(d.text, x)) {
			return true, 1
		}
		return x == "", 0
	case float64:
		b, _ := json.Marshal(x)
		return strings.Contains(d.text, string(b)), 1
	case bool, nil:
		return true, 0
	case map[string]any:
		if b, err := json.Marshal(x); err == nil && d.blocks[string(b)] {
			return true, 1
		}
		return d.allHeld(maps.Values(x))
	case []any:
		return d.allHeld(slices.Values(x))
	}
	return false, 0
}

// allHeld is held for each of vs: whether every one is held, and how
// many blocks they hold in all.
func (d dedup) allHeld(vs iter.Seq[any]) (bool, int) {
	n := 0
	for e := range vs {
		ok, m := d.held(e)
		if !ok {
			return false, 0
		}
		n += m
	}
	return true, n
}

// trim replaces the long strings of v the parts already hold by a note.
func (d dedup) trim(v any) any {
	switch x := v.(type) {
	case string:
		if note, ok := d.binary[x]; ok && len(x) >= repeatMin {
			return note
		}
		if len(x) >= repeatMin && strings.Contains(d.text, x) {
			return "[the same as the text above]"
		}
	case map[string]any:
		for k, e := range x {
			x[k] = d.trim(e)
		}
	case []any:
		for i, e := range x {
			x[i] = d.trim(e)
		}
	}
	return v
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
	return text.Size(int64(n))
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
