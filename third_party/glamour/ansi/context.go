package ansi

import (
	"html"
	"strings"
)

// RenderContext holds the current rendering options and state.
type RenderContext struct {
	options Options

	blockStack *BlockStack
	table      *TableElement
}

// NewRenderContext returns a new RenderContext.
func NewRenderContext(options Options) RenderContext {
	return RenderContext{
		options:    options,
		blockStack: &BlockStack{},
		table:      &TableElement{},
	}
}

// SanitizeHTML sanitizes HTML content: tags and comments are dropped, and so
// is the content of elements that hold no text (scripts, styles), as
// bluemonday's strict policy did; character references are resolved.
//
// PATCH (ralph): bluemonday is no longer linked, since linking it cost
// ~1 ms and 1 MB of package initialisation (its CSS tables, gorilla/css
// and x/net/html) at every start of a program that renders no HTML at all.
func (ctx RenderContext) SanitizeHTML(s string, trimSpaces bool) string {
	s = stripHTML(s)
	if trimSpaces {
		s = strings.TrimSpace(s)
	}

	return html.UnescapeString(s)
}

// skipsContent reports whether bluemonday's strict policy drops the
// content of the named element along with its tags.
func skipsContent(name string) bool {
	switch name {
	case "frameset", "iframe", "noembed", "noframes", "noscript", "nostrict", "script", "style", "title":
		return true
	}
	return false
}

// stripHTML returns the text of HTML source s without tags and comments,
// character references left as written.
func stripHTML(s string) string {
	var b strings.Builder
	skipping := "" // the element whose content is being dropped
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			if skipping == "" {
				b.WriteString(s)
			}
			break
		}
		if skipping == "" {
			b.WriteString(s[:i])
		}
		s = s[i:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s[4:], "-->")
			if end < 0 {
				break
			}
			s = s[4+end+3:]
			continue
		}
		if len(s) < 2 || !isTagStart(s[1]) {
			// A "<" that opens no tag is text, as in "a < b".
			if skipping == "" {
				b.WriteByte('<')
			}
			s = s[1:]
			continue
		}
		end := strings.IndexByte(s, '>')
		if end < 0 {
			break
		}
		name, closing := tagName(s[1:end])
		s = s[end+1:]
		switch {
		case skipping == "" && !closing && skipsContent(name):
			skipping = name
		case skipping != "" && closing && name == skipping:
			skipping = ""
		}
	}
	return b.String()
}

// isTagStart reports whether c, after a "<", opens a tag, an end tag, a
// declaration or a processing instruction.
func isTagStart(c byte) bool {
	return c == '/' || c == '!' || c == '?' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// tagName is the lower-case element name of a tag's inside ("/p", "br /",
// "a href=x") and whether it is an end tag.
func tagName(inside string) (string, bool) {
	closing := strings.HasPrefix(inside, "/")
	inside = strings.TrimPrefix(inside, "/")
	end := strings.IndexAny(inside, " \t\n\r\f/")
	if end >= 0 {
		inside = inside[:end]
	}
	return strings.ToLower(inside), closing
}
