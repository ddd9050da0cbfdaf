package providers

import (
	"net/url"
	"strings"
)

// Which API a model is served on and which tools it was trained on are
// facts of the provider that made it, kept here with the others.
//
// OpenAI serves its coding models (every codex model, o1-pro, o3-pro) only
// on the Responses API: chat completions answers HTTP 404 "This model is
// only supported in v1/responses and not in v1/chat/completions." The
// GPT-5 family and the o-series are served on both, but only the Responses
// API carries their reasoning from one tool call to the next (encrypted
// reasoning items given back with store false), so they get it on
// OpenAI's own endpoint. Every other model, and every other
// OpenAI-compatible server, gets chat completions unless the person's
// configuration names the wire (wire = "responses": vLLM, LM Studio,
// OpenRouter and Ollama serve it too).
//
// The tool families are the tool sets the makers train their models on:
// Claude Code's for Anthropic's models, and codex's, which differ by model
// (codex's own table of models, codex-rs's model_family.rs and the
// models.json codex 0.77.0 ships): recordings of codex 0.77.0 run with
// each model name are in testdata/codex-tools.

// Wire names, as the configuration's wire takes them.
const (
	// WireAuto chooses per model (Wire).
	WireAuto = "auto"
	// WireChat is OpenAI's chat completions.
	WireChat = "chat"
	// WireResponses is OpenAI's Responses API.
	WireResponses = "responses"
)

// Wires are the values the configuration's wire takes.
func Wires() []string { return []string{WireAuto, WireChat, WireResponses} }

// responsesOnly are the OpenAI models (bare name prefixes) served only on
// the Responses API (the GPT-5-Codex prompting guide; OpenAI's model
// pages: "available in the Responses API only").
var responsesOnly = []string{"o1-pro", "o3-pro", "gpt-5-pro", "o3-deep-research", "o4-mini-deep-research", "computer-use-preview", "codex-mini"}

// ResponsesOnly reports whether OpenAI serves model only on the Responses
// API: every codex model, and the few others OpenAI names so. A router's
// name for it ("openai/gpt-5-codex" on OpenRouter) is served on chat
// completions by the router, which translates.
func ResponsesOnly(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	if strings.Contains(m, "/") {
		return false
	}
	if strings.Contains(m, "codex") {
		return true
	}
	for _, p := range responsesOnly {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// reasoningModels are the OpenAI models (bare name prefixes) whose
// reasoning only the Responses API carries between tool calls.
var reasoningModels = []string{"gpt-5", "gpt-6", "o1", "o3", "o4"}

// Wire is the API a request for model at baseURL goes to, WireChat or
// WireResponses, for an endpoint that speaks OpenAI's protocol:
// configured when the person named one (WireChat, WireResponses),
// otherwise the Responses API for the models served only there (named as
// OpenAI names them), and for the GPT-5 family and the o-series on
// OpenAI's own endpoint; chat completions for everything else.
func Wire(baseURL, model, configured string) string {
	switch strings.ToLower(strings.TrimSpace(configured)) {
	case WireChat:
		return WireChat
	case WireResponses:
		return WireResponses
	}
	if ResponsesOnly(model) {
		return WireResponses
	}
	if own, _ := Named("openai"); sameHost(baseURL, own.BaseURL) && !strings.Contains(model, "/") {
		m := strings.ToLower(model)
		for _, p := range reasoningModels {
			if strings.HasPrefix(m, p) {
				return WireResponses
			}
		}
	}
	return WireChat
}

// sameHost reports whether two URLs name the same host.
func sameHost(a, b string) bool {
	u, err := url.Parse(a)
	return err == nil && u.Hostname() != "" && strings.EqualFold(u.Hostname(), hostname(b))
}

// ToolFamily is a tool set a model family was trained on: the names,
// descriptions and input shapes under which ralph offers it its tools
// (workers/tools, families.go). The zero value is ralph's own names.
type ToolFamily string

const (
	// FamilyRalph is ralph's own tool names and shapes, for every model
	// trained on no tool set of its own.
	FamilyRalph ToolFamily = ""
	// FamilyClaude is Claude Code's tools (Bash, Read, Write, Edit, Glob,
	// Grep, TodoWrite, WebFetch, Task, TaskOutput, TaskStop), for
	// Anthropic's models.
	FamilyClaude ToolFamily = "claude"
	// FamilyCodex is codex's shell_command (a string command), apply_patch
	// as a freeform grammar tool, update_plan and view_image: GPT-5.1 and
	// later, and every codex model.
	FamilyCodex ToolFamily = "codex"
	// FamilyGPT5 is codex's shell (an argv array) with apply_patch run
	// through it, update_plan and view_image: GPT-5 and the o-series.
	FamilyGPT5 ToolFamily = "gpt-5"
	// FamilyCodexMini is the Responses API's built-in local_shell with
	// apply_patch through it, update_plan and view_image:
	// codex-mini-latest.
	FamilyCodexMini ToolFamily = "codex-mini"
	// FamilyGPTOSS is codex's shell (an argv array) and apply_patch as a
	// JSON function: OpenAI's open-weight gpt-oss models.
	FamilyGPTOSS ToolFamily = "gpt-oss"
)

// Families are every family but ralph's own, in a fixed order.
func Families() []ToolFamily {
	return []ToolFamily{FamilyClaude, FamilyCodex, FamilyGPT5, FamilyCodexMini, FamilyGPTOSS}
}

// Name is the family as the configuration and the docs name it ("ralph"
// for ralph's own).
func (f ToolFamily) Name() string {
	if f == FamilyRalph {
		return "ralph"
	}
	return string(f)
}

// FamilyNamed is the family called name ("ralph" or one of Families), and
// false for a name no family has.
func FamilyNamed(name string) (ToolFamily, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "ralph" {
		return FamilyRalph, true
	}
	for _, f := range Families() {
		if string(f) == n {
			return f, true
		}
	}
	return FamilyRalph, false
}

// Patches reports whether the family edits with codex's apply_patch (as a
// tool of its own or through its shell).
func (f ToolFamily) Patches() bool {
	switch f {
	case FamilyCodex, FamilyGPT5, FamilyCodexMini, FamilyGPTOSS:
		return true
	}
	return false
}

// FamilyOf is the tool family model was trained on, by its name as it is
// or behind a router's prefix ("anthropic/claude-sonnet-4.5",
// "openai/gpt-5-codex"): Claude Code's for Anthropic's models, codex's
// variants for OpenAI's (as codex's table of models gives them), and
// ralph's own for every other model, gpt-4o and gpt-4.1 among them.
func FamilyOf(model string) ToolFamily {
	m := BareModel(strings.TrimSpace(model))
	switch {
	case strings.HasPrefix(m, "claude-") || IsAlias(m):
		return FamilyClaude
	case strings.HasPrefix(m, "gpt-oss"):
		return FamilyGPTOSS
	case strings.HasPrefix(m, "codex-mini"):
		return FamilyCodexMini
	case strings.Contains(m, "codex"), laterGPT5(m), strings.HasPrefix(m, "gpt-6"):
		return FamilyCodex
	case m == "gpt-5" || strings.HasPrefix(m, "gpt-5-") || oSeries(m):
		return FamilyGPT5
	}
	return FamilyRalph
}

// laterGPT5 reports GPT-5.1 and later point releases ("gpt-5.1",
// "gpt-5.2-mini"), which codex gives shell_command and the freeform
// apply_patch.
func laterGPT5(m string) bool {
	rest, ok := strings.CutPrefix(m, "gpt-5.")
	return ok && rest != "" && rest[0] >= '1' && rest[0] <= '9'
}

// oSeries reports OpenAI's o-series reasoning models (o1, o3-mini,
// o4-mini), not names that only begin with an o.
func oSeries(m string) bool {
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9' && (len(m) == 2 || m[2] == '-')
}

// Reasons reports whether model is one of OpenAI's reasoning models
// (GPT-5 and later, the o-series, every codex model), named as OpenAI
// names them: on the Responses API its requests ask for a reasoning
// summary and for the encrypted reasoning (include
// reasoning.encrypted_content), which ralph carries to the next request.
// Other models (gpt-4o, gpt-4.1, gpt-oss) refuse those fields or have no
// such reasoning.
func Reasons(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	if strings.Contains(m, "/") {
		return false
	}
	if strings.Contains(m, "codex") {
		return true
	}
	for _, p := range reasoningModels {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// ReasoningEffort is the reasoning effort ralph asks model for on the
// Responses API, "" for the model's own default. OpenAI's default is
// medium, save for GPT-5.1 and the later point releases without codex in
// their name, whose default is none (no reasoning at all): codex 0.77.0
// asks those for medium and leaves the others to their default
// (testdata/codex-tools), and so does ralph.
func ReasoningEffort(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if laterGPT5(m) && !strings.Contains(m, "codex") {
		return "medium"
	}
	return ""
}

// SearchesOnResponses reports whether model runs OpenAI's own web search
// on the Responses API (a {"type":"web_search"} tool): the GPT-5 family
// and the o-series.
func SearchesOnResponses(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	return !strings.Contains(m, "/") && (strings.HasPrefix(m, "gpt-5") || oSeries(m))
}
