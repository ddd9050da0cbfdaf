package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/text"
)

// bodyShape is the form an error body came in. Real servers disagree:
//
//   - object: {"error":{"message":…,"type":…,"code":…}} — OpenAI, Ollama's
//     /v1 layer, LM Studio, llama.cpp's server, OpenRouter (numeric code),
//     recent vLLM; Anthropic's {"type":"error","error":{"type":
//     "overloaded_error","message":"Overloaded"}}, over HTTP and as a
//     stream's error event, whose type stands as its code; also vLLM's
//     older top-level {"object":"error","message":…} and FastAPI's
//     {"detail":…} for routes it does not know.
//   - string: {"error":"<text>"} — Ollama's native API, and LM Studio for a
//     path it does not serve ("Unexpected endpoint or method. (POST
//     /chat/completions)", sent with HTTP 200).
//   - html: a proxy's or web server's error page (nginx's 502, Cloudflare).
//   - empty: no body at all (a load balancer's bare 502).
//   - text: anything else, such as Go's and Ollama's "404 page not found".
type bodyShape string

const (
	shapeObject bodyShape = "object"
	shapeString bodyShape = "string"
	shapeHTML   bodyShape = "html"
	shapeEmpty  bodyShape = "empty"
	shapeText   bodyShape = "text"
)

// serverError is what a server said about a failure, whatever its shape.
type serverError struct {
	shape   bodyShape
	message string // the server's own words, one line, trimmed and clipped
	code    string // error.code or error.type, lower case; a number as digits
	typ     string // error.type, lower case
	// reset is when a rate limit resets, as the body says it: OpenRouter
	// copies the upstream's X-RateLimit-Reset into error.metadata.headers.
	reset string
}

// maxWords bounds the server's words in a sentence: enough for any real
// error message, short enough that a stack trace does not flood stderr.
const maxWords = 300

// parseErrorBody reads an error body of any shape.
func parseErrorBody(body []byte) serverError {
	b := bytes.TrimSpace(body)
	switch {
	case len(b) == 0:
		return serverError{shape: shapeEmpty}
	case looksHTML(b):
		return serverError{shape: shapeHTML, message: htmlTitle(b)}
	case b[0] == '{':
		if se, ok := parseErrorJSON(b); ok {
			return se
		}
	}
	return serverError{shape: shapeText, message: words(string(b))}
}

// parseErrorJSON reads a JSON error object; ok is false when b is not one.
func parseErrorJSON(b []byte) (serverError, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return serverError{}, false
	}
	if raw, ok := top["error"]; ok && !isNull(raw) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return serverError{shape: shapeString, message: words(s)}, true
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			return objectError(inner), true
		}
	}
	// vLLM before 0.10: {"object":"error","message":…,"type":"BadRequestError","code":400}.
	if _, ok := top["message"]; ok {
		return objectError(top), true
	}
	// FastAPI (vLLM, llama-cpp-python) for an unknown route: {"detail":"Not Found"}.
	if raw, ok := top["detail"]; ok {
		return serverError{shape: shapeObject, message: words(jsonText(raw))}, true
	}
	return serverError{}, false
}

func objectError(m map[string]json.RawMessage) serverError {
	se := serverError{shape: shapeObject, message: words(jsonText(m["message"]))}
	se.typ = strings.ToLower(jsonText(m["type"]))
	se.code = strings.ToLower(jsonText(m["code"]))
	if se.code == "" {
		se.code = se.typ
	}
	var meta struct {
		Raw     json.RawMessage            `json:"raw"`
		Headers map[string]json.RawMessage `json:"headers"`
	}
	if json.Unmarshal(m["metadata"], &meta) == nil {
		if se.message == "" {
			// OpenRouter puts the upstream provider's own words in metadata.raw.
			se.message = words(jsonText(meta.Raw))
		}
		for k, v := range meta.Headers {
			if strings.EqualFold(k, "X-RateLimit-Reset") {
				se.reset = jsonText(v)
			}
		}
	}
	return se
}

// jsonText is a JSON string's text, a number's digits, or "" for anything
// else (null, objects).
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var ss []string // go-openai's issue 381: a message that is a list
	if json.Unmarshal(raw, &ss) == nil {
		return strings.Join(ss, ", ")
	}
	return ""
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// numericCode is the error's code as an HTTP-like status (OpenRouter and
// llama.cpp put the status in error.code), or 0.
func (se serverError) numericCode() int {
	n, err := strconv.Atoi(se.code)
	if err != nil || n < 100 || n > 599 {
		return 0
	}
	return n
}

var (
	htmlStart = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(<!doctype html|<html|<head|<body|<center|<h1|<title)`)
	})
	htmlTitle = func(b []byte) string {
		for _, re := range []*regexp.Regexp{titleRe(), h1Re()} {
			if m := re.FindSubmatch(b); m != nil {
				if t := words(html.UnescapeString(tagRe().ReplaceAllString(string(m[1]), ""))); t != "" {
					return t
				}
			}
		}
		return ""
	}
	titleRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`) })
	h1Re    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`) })
	tagRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })
)

func looksHTML(b []byte) bool { return htmlStart().Match(b) }

// words makes a server's text fit one sentence: one line, no controls,
// clipped.
func words(s string) string {
	s = strings.Join(strings.Fields(text.StripControls(s)), " ")
	return text.Clip(s, maxWords)
}

// describe is the server's words for a sentence, or what the body was
// when it said nothing.
func (se serverError) describe() string {
	switch {
	case se.message != "" && se.shape == shapeHTML:
		return fmt.Sprintf("an HTML error page: %s", se.message)
	case se.message != "":
		return se.message
	case se.shape == shapeHTML:
		return "an HTML error page"
	case se.shape == shapeEmpty:
		return "an empty response"
	}
	return "no message"
}
