package agents

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// This file reads what an agent said went wrong — its own error, the tools
// its permissions refused, the last command it ran — and turns that into
// the one sentence a person reads when a task fails. The marker alone does
// not make a task done: claude in its default permission mode and codex
// in its default read-only sandbox both print it after every write was
// refused.

// MarkerInstructions tell an external agent how to say it is done, for the
// end of its prompt: the markers and what they mean, once.
const MarkerInstructions = "Do the task and verify it (build, tests) where that makes sense. " +
	"When it is done, end your final message with " + CompletionMarker + " on a line of its own; ralph then checks the work and marks the task done. " +
	"If the task needed no change to any file, end with " + NoChangesMarker + " instead. " +
	"If you cannot finish it, print neither and say what blocks it."

// AgentReport is what an agent said about how its run went, beyond its
// answer.
type AgentReport struct {
	// AgentError is the agent's own account of a failure, in its words:
	// claude's result when is_error is set, codex's turn.failed or an error
	// event no completed turn followed, opencode's error event. "" when it reported none.
	AgentError string
	// NoChanges: the agent printed NoChangesMarker, saying the task is done
	// and needed no change to any file.
	NoChanges bool
	// Denials are the tool calls the agent's permissions refused
	// (claude's permission_denials, opencode's refused tool calls).
	Denials []Denial
	// LastCommand is the last shell command the agent ran, nil for none.
	LastCommand *AgentCommand
}

// Denial is one tool call an agent's permissions refused.
type Denial struct {
	Tool  string // as the agent names it: Bash, Edit, Write, …
	Input string // what it would have run or written, on one line
}

// AgentCommand is a shell command an agent ran and how it ended.
type AgentCommand struct {
	Command  string
	ExitCode *int // nil when the agent does not say (claude)
	Failed   bool
	Output   string // its first line of output
}

// report is what the stream said went wrong, once it has ended.
func (s *agentStream) report() AgentReport {
	r := AgentReport{AgentError: s.agentErr, NoChanges: s.noChanges, Denials: s.denials, LastCommand: s.lastCmd}
	if r.AgentError == "" && s.pendingErr != "" {
		r.AgentError = s.pendingErr // an error nothing recovered from
	}
	return r
}

// denialInput is the gist of a refused call's input: the command of a
// Bash call, the path of an edit, else the input itself.
func denialInput(raw json.RawMessage) string {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(raw, &in)
	switch {
	case in.Command != "":
		return text.OneLine(in.Command)
	case in.FilePath != "":
		return in.FilePath
	}
	return text.OneLine(string(raw))
}

// unwrapShell shows `/bin/bash -lc 'go test'`, as codex reports its
// commands, as the command the model wrote.
func unwrapShell(command string) string {
	for _, sh := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c ", "/bin/zsh -lc ", "zsh -lc "} {
		rest, ok := strings.CutPrefix(command, sh)
		if !ok || len(rest) < 2 {
			continue
		}
		q := rest[0]
		if (q == '\'' || q == '"') && rest[len(rest)-1] == q {
			inner := rest[1 : len(rest)-1]
			if q == '"' {
				inner = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`).Replace(inner)
			}
			return inner
		}
	}
	return command
}

// Failure is why a finished run failed, in one sentence, or "": the
// agent's own error first, then a non-zero exit without the marker, with
// the line of stderr that says most (see stderrReason).
func (r Result) Failure(kind Kind) string {
	switch {
	case r.AgentError != "":
		return fmt.Sprintf("%s failed: %s", kind, clipOneLine(r.AgentError, 300))
	case r.ExitCode != 0 && !r.Completed:
		msg := fmt.Sprintf("%s exited with status %d", kind, r.ExitCode)
		if why := stderrReason(r.Stderr); why != "" {
			msg += ": " + why
		}
		return msg
	}
	return ""
}

// Contradiction is why a claimed completion does not hold, in one
// sentence, or "": a tool the agent's permissions refused, or a last
// command that failed.
func (r Result) Contradiction(kind Kind) string {
	if len(r.Denials) > 0 {
		d := r.Denials[0]
		msg := fmt.Sprintf("%s was not allowed to %s", kind, denialVerb(d))
		if n := len(r.Denials) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %s)", text.Counted(n, "more refused call", "more refused calls"))
		}
		return msg + ": " + denialHint(kind, d)
	}
	if c := r.LastCommand; c != nil && c.Failed {
		status := "failed"
		if c.ExitCode != nil {
			status = fmt.Sprintf("failed with exit status %d", *c.ExitCode)
		}
		msg := fmt.Sprintf("the last command %s ran %s, so the task is not verified: %s", kind, status, clipOneLine(c.Command, 200))
		if strings.TrimSpace(c.Command) == "" {
			// A call whose input the agent could not read: no command ran.
			msg = fmt.Sprintf("the last shell call %s made failed, so the task is not verified", kind)
		}
		if c.Output != "" {
			msg += " (" + clipOneLine(c.Output, 200) + ")"
		}
		return msg
	}
	return ""
}

func denialVerb(d Denial) string {
	if strings.TrimSpace(d.Input) == "" {
		return "use " + d.Tool
	}
	switch d.Tool {
	case "Bash", "bash":
		return fmt.Sprintf("run %s (%s)", d.Tool, clipOneLine(d.Input, 120))
	case "run_shell_command":
		return fmt.Sprintf("run a shell command (%s)", clipOneLine(d.Input, 120))
	case "Edit", "Write", "MultiEdit", "NotebookEdit", "edit", "write", "patch", "multiedit", "write_file", "replace":
		return fmt.Sprintf("use %s on %s", d.Tool, clipOneLine(d.Input, 120))
	}
	return "use " + d.Tool
}

// denialHint says how to allow a refused tool, in the agent's own terms
// or in ralph's where ralph's settings decide (its CLI's denialHint).
func denialHint(kind Kind, d Denial) string {
	if c := cliFor(kind); c != nil {
		return c.denialHint(d)
	}
	return "check the permissions of the agent's own settings"
}

// stderrNoise are lines codex and claude print on stderr in ordinary
// runs; they never say why a run failed.
var stderrNoise = []string{
	"WARNING: proceeding, even though we could not create PATH aliases",
	"Reading prompt from stdin",
	"Reading additional input from stdin",
	"failed to record rollout items",
}

// stderrReason picks the line of stderr that best says why the agent
// failed: the last one that mentions an error, else the last line, noise
// left out.
func stderrReason(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || isNoise(l) {
			continue
		}
		lines = append(lines, l)
	}
	for i := len(lines) - 1; i >= 0; i-- {
		lower := strings.ToLower(lines[i])
		if strings.Contains(lower, "error") || strings.Contains(lower, "fatal") || strings.Contains(lower, "fail") {
			return clipOneLine(lines[i], 300)
		}
	}
	if len(lines) > 0 {
		return clipOneLine(lines[len(lines)-1], 300)
	}
	return ""
}

func isNoise(line string) bool {
	for _, n := range stderrNoise {
		if strings.Contains(line, n) {
			return true
		}
	}
	return false
}

func clipOneLine(s string, n int) string { return text.Clip(text.OneLine(s), n) }

// firstLine is the first non-blank line, without text.FirstLine's " …": a
// command's output as the agent's verdict quotes it.
func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(first)
}
