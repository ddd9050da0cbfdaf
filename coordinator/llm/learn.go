package llm

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// Fields some OpenAI-compatible servers refuse. Servers with strict request
// schemas answer 400 naming the field they do not know (a pydantic
// "stream_options: Extra inputs are not permitted", "property
// 'stream_options' is unsupported", "messages[2].name: unknown field");
// ralph learns it from that first 400, sends the request again without the
// field, and leaves it out for the rest of the process.
var (
	streamOptionsRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)stream_options`) })
	// OpenAI: "Unsupported parameter: 'max_tokens' is not supported with
	// this model. Use 'max_completion_tokens' instead."; a strict schema
	// that does not know max_completion_tokens names it.
	maxTokensRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)max_tokens.*max_completion_tokens`) })
	completionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)max_completion_tokens`) })
	toolNameRe   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\bname\b.*(not permitted|unsupported|unknown|not allowed|unexpected|unrecognized))|((unknown|unexpected|unrecognized|extra)[^.]*\bname\b)|messages\.\d+\.name|messages\[\d+\]\.name`)
	})
)

// learnFields reports whether f is a 400 about a field chat completions
// at this endpoint can leave out, and leaves it out from now on.
func (w *chatWire) learnFields(c *Client, req Request, f *failure) bool {
	if f.status != 400 {
		return false
	}
	msg := f.server.message
	switch {
	case w.schema.learn(req, f):
		return true
	case !w.noStreamOptions.Load() && streamOptionsRe().MatchString(msg):
		w.noStreamOptions.Store(true)
		return true
	case c.cfg.MaxOutputTokens > 0 && w.tokensField.Load() != tokensFieldCompletion && maxTokensRe().MatchString(msg) && !w.completionTokensField(c, req.Model):
		w.tokensField.Store(tokensFieldCompletion)
		return true
	case c.cfg.MaxOutputTokens > 0 && w.tokensField.Load() != tokensFieldMax && completionRe().MatchString(msg) && w.completionTokensField(c, req.Model):
		w.tokensField.Store(tokensFieldMax)
		return true
	case !w.noToolName.Load() && hasToolName(req) && toolNameRe().MatchString(msg) && !modelRe().MatchString(msg):
		w.noToolName.Store(true)
		return true
	}
	return false
}

func hasToolName(req Request) bool {
	for _, m := range req.Messages {
		if m.Role == "tool" && m.Name != "" {
			return true
		}
	}
	return false
}

// looseSchema is set once the endpoint refused a schema's strict form.
// Each of OpenAI's two APIs learns it for itself (chatWire.schema,
// responsesWire.schema): they check schemas apart.
type looseSchema struct{ atomic.Bool }

// learn reports a 400 that refused a request's schema in
// strict mode ("Invalid schema for response_format 'final_answer': In
// context=(), …"), which ralph made strict where it judged the meaning
// kept: from then on the schema goes as the person gave it with strict
// off, and the answer is still validated against it (coordinator).
func (l *looseSchema) learn(req Request, f *failure) bool {
	sc := req.Schema
	if f.status != 400 || sc == nil || !sc.Strict || sc.Given == nil || l.Load() ||
		!strings.Contains(f.server.message, "Invalid schema for response_format") {
		return false
	}
	l.Store(true)
	return true
}

// sent is the schema as the wire sends it: strict, or as given once the
// endpoint refused its strict form.
func (l *looseSchema) sent(sc *OutputSchema) OutputSchema {
	if sc.Strict && sc.Given != nil && l.Load() {
		return OutputSchema{Name: sc.Name, Schema: sc.Given}
	}
	return *sc
}
