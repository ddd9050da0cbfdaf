package lsp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

// This file is the one shape in which a language server's words reach
// the model (an edit tool's result, the diagnostics tool) and the
// person (/lsp): lines the end-to-end tests read (docs/editors.md,
// "Language servers"). A server's messages are untrusted text, so each
// is one line, without control sequences, and clipped.

// Severity is an LSP DiagnosticSeverity: 1 error, 2 warning, 3
// information, 4 hint.
type Severity int

// The severities.
const (
	SeverityError   Severity = 1
	SeverityWarning Severity = 2
	SeverityInfo    Severity = 3
	SeverityHint    Severity = 4
)

// String is the severity's word in a diagnostics line.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	}
	return "hint"
}

// Diagnostic is one diagnostic of a file, positions 1-based.
type Diagnostic struct {
	// Path is relative to the project root, with slashes.
	Path      string
	Line, Col int
	Severity  Severity
	Message   string
}

// Line1 is the diagnostic as the model reads it: main.go:12:5: error: undefined: foo.
func (d Diagnostic) Line1() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", d.Path, d.Line, d.Col, d.Severity, cleanMessage(d.Message))
}

// Bounds of a report.
const (
	// MaxLines is the most diagnostics a report lists.
	MaxLines = 20
	// maxMessage is the most bytes of one message a line shows.
	maxMessage = 300
)

// cleanMessage is a server's message made one safe line: controls
// (escape sequences among them) stripped, lines joined, clipped.
func cleanMessage(s string) string {
	return text.Clip(text.OneLine(text.StripControls(s)), maxMessage)
}

// Outcome is how a wait for a server's diagnostics ended.
type Outcome int

// The outcomes.
const (
	// Answered: the server published diagnostics for the edit.
	Answered Outcome = iota
	// NoAnswer: nothing came within the wait.
	NoAnswer
	// Stopped: the server could not start, crashed, hung or flooded.
	Stopped
)

// Report is one server's diagnostics of one file after an edit.
type Report struct {
	Server string
	// File is the edited file relative to the project root, with slashes.
	File    string
	Outcome Outcome
	Diags   []Diagnostic
	// Wait is the bound a NoAnswer report names.
	Wait time.Duration
	// Why says why a Stopped server stopped.
	Why string
}

// String is the report's block (contract 2 of docs/editors.md):
//
//	diagnostics from gopls for main.go (errors first; 2 of 2):
//	main.go:12:5: error: undefined: foo
//	main.go:20:1: warning: ...
//
// or one line: "...: none", "...: no answer within 3s", or "language
// server gopls stopped: <why>".
func (r Report) String() string {
	switch r.Outcome {
	case Stopped:
		return StoppedLine(r.Server, r.Why)
	case NoAnswer:
		return fmt.Sprintf("diagnostics from %s for %s: no answer within %s", r.Server, r.File, waitWords(r.Wait))
	}
	if len(r.Diags) == 0 {
		return fmt.Sprintf("diagnostics from %s for %s: none", r.Server, r.File)
	}
	diags := Sorted(r.Diags)
	shown := diags[:min(len(diags), MaxLines)]
	var b strings.Builder
	fmt.Fprintf(&b, "diagnostics from %s for %s (errors first; %d of %d):", r.Server, r.File, len(shown), len(diags))
	for _, d := range shown {
		b.WriteString("\n")
		b.WriteString(d.Line1())
	}
	return b.String()
}

// StoppedLine is the one line naming a server that stopped and why.
func StoppedLine(server, why string) string {
	return fmt.Sprintf("language server %s stopped: %s", server, cleanMessage(why))
}

// Sorted is a copy of diags, errors first, then warnings, info and
// hints, each by file, line and column.
func Sorted(diags []Diagnostic) []Diagnostic {
	out := slices.Clone(diags)
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		if c := sevRank(a.Severity) - sevRank(b.Severity); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return out
}

// sevRank orders severities; an unknown one (0) counts as an error, as
// LSP says a client may take a missing severity.
func sevRank(s Severity) int {
	if s < SeverityError || s > SeverityHint {
		return int(SeverityError)
	}
	return int(s)
}

// waitWords is a wait as a person writes it: 3s, 1.5s, 2m0s.
func waitWords(d time.Duration) string {
	if d%time.Second == 0 && d < time.Minute {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.String()
}

// Append adds reports after a tool's own output, one blank line before
// them (contract 2), and returns the output.
func Append(output string, reports []Report) string {
	if len(reports) == 0 {
		return output
	}
	blocks := make([]string, 0, len(reports))
	for _, r := range reports {
		blocks = append(blocks, r.String())
	}
	return strings.TrimRight(output, "\n") + "\n\n" + strings.Join(blocks, "\n\n")
}
