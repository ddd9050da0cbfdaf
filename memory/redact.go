package memory

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/gitcreds"
)

// Redacted is what a secret becomes in every file ralph writes, and in
// the copy of a repository's configuration the model reads (gitcreds).
const Redacted = gitcreds.Masked

// minSecretLen is the shortest string treated as a secret: very short
// strings would redact ordinary words, and real keys are long.
const minSecretLen = 8

// Redactor replaces secrets (the API key) in text before ralph writes it
// anywhere: session logs, the chat history, AGENT.md, RALPH_PROGRESS.md,
// config files. A person may paste the key into a message and the model
// may repeat it in a tool call; neither may put it on disk, where git or a
// backup would carry it further. The zero value and nil redact nothing.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor returns a Redactor for secrets; empty and short strings are
// ignored.
func NewRedactor(secrets ...string) *Redactor {
	var forms []string
	for _, s := range secrets {
		if len(s) >= minSecretLen {
			for _, f := range secretForms(s) {
				if !slices.Contains(forms, f) {
					forms = append(forms, f)
				}
			}
		}
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// strings.Replacer takes the first pair, in argument order, that matches
	// at a position; longest first keeps a secret that extends another
	// from leaking its tail.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// Redact returns s with every secret replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// RedactBytes is Redact for bytes; b itself is returned when there is
// nothing to redact.
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil || r.r == nil {
		return b
	}
	return []byte(r.r.Replace(string(b)))
}

// Contains reports whether s holds a secret.
func (r *Redactor) Contains(s string) bool { return r.Redact(s) != s }

// secretForms is s as it appears in the bytes ralph writes: raw in
// markdown, and JSON-escaped (with and without HTML escaping, as the
// encoders differ) in the JSON files. Redacting only the raw form would let
// a key containing a quote, backslash, '&', '<' or '>' through the JSON
// files, where the decoded value is the secret again.
func secretForms(s string) []string {
	forms := []string{s}
	add := func(f string) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	if b, err := json.Marshal(s); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err == nil {
		b := bytes.TrimSpace(buf.Bytes())
		add(string(b[1 : len(b)-1]))
	}
	return forms
}
