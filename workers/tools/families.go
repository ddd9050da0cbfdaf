package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
)

// Models work best through the tools they were trained on: Anthropic's
// through Claude Code's (Bash, Read, Edit…), OpenAI's through codex's,
// which differ by model (shell_command and a freeform apply_patch for
// GPT-5.1 and the codex models; shell with an argv array, and apply_patch
// run through it, for GPT-5 and the o-series). A tool of ralph's is one
// implementation, in the list (tools.go); a family gives it a name, a
// description and an input shape (a face), or leaves it out where its own
// tools do its work (codex reads files with its shell). ralph keeps its
// own name for every tool in the conversation, the events, hooks,
// approvals and records: the model client turns a request into the
// answering model's terms just before it is sent (Offer) and the calls of
// its answer back into ralph's (Canonical), so /model and a fallback
// model of another family change what is offered and nothing else.
//
// Every family's names are accepted from every model: a Claude model that
// calls shell_command, or a codex model that calls Bash, gets the tool.

// face is one of ralph's tools as a family offers it.
type face struct {
	// tool is ralph's name of the tool.
	tool string
	// name is the family's; aliases are its other names, accepted from a
	// model and never offered (Claude Code's MultiEdit, LS).
	name    string
	aliases []string
	// doc is the key of its description, doc + ".md" beside the tools.
	doc string
	// params is its input shape, a params struct as the list's are; nil
	// for a freeform or built-in tool.
	params any
	// format makes it a freeform tool (codex's apply_patch); builtin one
	// the API itself defines (the Responses API's local_shell).
	format  *conversation.ToolFormat
	builtin string
	// needs, when set, is a tool of ralph's the face applies only beside:
	// codex offers read_file as view_image only where its shell reads the
	// text files.
	needs string
	// hiddenFace is a face only for the conversation: calls of the tool
	// are shown this way and accepted, but the tool is not offered under
	// it (GPT-5 runs apply_patch through its shell).
	hiddenFace bool
	// in maps a call's input in the family's shape to ralph's arguments,
	// and may name another of ralph's tools (a shell call that applies a
	// patch is apply_patch); nil renames fields by renames.
	in func(args json.RawMessage) (tool string, out json.RawMessage, err error)
	// out maps ralph's arguments to the family's input shape, for a call
	// in the conversation; nil renames fields by renames.
	out func(args json.RawMessage) (json.RawMessage, bool)
	// renames maps the family's input fields to ralph's arguments.
	renames map[string]string
}

// family is the tools one family is offered.
type family struct {
	// faces are its faces of ralph's tools, in no particular order: what
	// is offered follows the order of the list.
	faces []face
	// covered are ralph's tools the family is not offered, by the tool of
	// ralph's whose presence covers each: codex's shell reads, lists and
	// searches files where run_command is offered, and its apply_patch
	// writes and edits them.
	covered map[string]string
}

// familyTable is every family but ralph's own, whose tools are the list's
// as they are (but apply_patch, which only the families trained on it
// are offered).
var familyTable = sync.OnceValue(func() map[providers.ToolFamily]family {
	return map[providers.ToolFamily]family{
		providers.FamilyClaude:    claudeFamily(),
		providers.FamilyCodex:     codexFamily(providers.FamilyCodex),
		providers.FamilyGPT5:      codexFamily(providers.FamilyGPT5),
		providers.FamilyCodexMini: codexFamily(providers.FamilyCodexMini),
		providers.FamilyGPTOSS:    codexFamily(providers.FamilyGPTOSS),
	}
})

// ralphCovered are the tools of the list ralph's own family is not
// offered: apply_patch is for the models trained on it, though any model
// that calls it gets it.
var ralphCovered = map[string]string{ToolApplyPatch: ""}

// familyOf is the family's table; ralph's own has no faces.
func familyOf(f providers.ToolFamily) family {
	if fam, ok := familyTable()[f]; ok {
		return fam
	}
	return family{covered: ralphCovered}
}

// faceFor is the face of ralph's tool in fam among the tools offered
// (present), or nil when the family offers it as it is.
func (fam family) faceFor(tool string, present map[string]bool) *face {
	for i := range fam.faces {
		f := &fam.faces[i]
		if f.tool == tool && (f.needs == "" || present == nil || present[f.needs]) {
			return f
		}
	}
	return nil
}

// hides reports whether fam is not offered tool beside the tools
// present.
func (fam family) hides(tool string, present map[string]bool) bool {
	by, ok := fam.covered[tool]
	return ok && (by == "" || present[by])
}

// Faces offers ralph's tools to each model as its family was trained on
// them (llm.ToolFaces). The zero value follows each model's family
// (providers.FamilyOf).
type Faces struct {
	// Family, when set, is the family every model is offered, whatever
	// its name says (tool_family in the configuration): a fine-tuned
	// model, or a gateway that renames models.
	Family *providers.ToolFamily

	// defs keeps the definitions made, by family, tool and the
	// description ralph's definition had (which may carry a sentence of
	// the session's own, run_command's sandbox).
	defs sync.Map
}

// FamilyFor is the family model is offered.
func (f *Faces) FamilyFor(model string) providers.ToolFamily {
	if f != nil && f.Family != nil {
		return *f.Family
	}
	return providers.FamilyOf(model)
}

// Offer returns the tools as model is offered them and the conversation
// with its tool calls and results named and shaped as model knows them
// (llm.ToolFaces). Tools not of the list (an MCP server's) are offered as
// they are.
func (f *Faces) Offer(model string, defs []ToolDef, msgs []conversation.Message) ([]ToolDef, []conversation.Message) {
	fam := familyOf(f.FamilyFor(model))
	present := make(map[string]bool, len(defs))
	for _, d := range defs {
		present[d.Name] = true
	}
	out := make([]ToolDef, 0, len(defs))
	for _, d := range defs {
		if fam.hides(d.Name, present) {
			continue
		}
		fc := fam.faceFor(d.Name, present)
		if fc == nil || fc.hiddenFace {
			out = append(out, d)
			continue
		}
		out = append(out, f.def(f.FamilyFor(model), fc, d))
	}
	return out, presentConversation(fam, present, msgs)
}

// def is the family's definition of a tool whose own definition is d.
func (f *Faces) def(fam providers.ToolFamily, fc *face, d ToolDef) ToolDef {
	type key struct {
		fam         providers.ToolFamily
		name, extra string
	}
	// A definition's description may end with a sentence of the
	// session's own (run_command's sandbox): the family's carries it too.
	extra := ""
	if base, ok := baseDescription(d.Name); ok {
		extra = strings.TrimPrefix(d.Description, base)
	}
	k := key{fam, fc.name, extra}
	if v, ok := f.defs.Load(k); ok {
		return v.(ToolDef)
	}
	md, err := toolDocs.ReadFile(fc.doc + ".md")
	if err != nil {
		panic(fmt.Sprintf("the %s face %s has no %s.md: %v", fam.Name(), fc.name, fc.doc, err))
	}
	out := ToolDef{Name: fc.name, Description: strings.TrimRight(string(md), "\n") + extra, Format: fc.format, Builtin: fc.builtin}
	if fc.params != nil {
		out.Parameters = Schema(fc.params)
	}
	f.defs.Store(k, out)
	return out
}

// baseDescription is the description of the list's tool called name as
// its .md has it, and false for a tool not of the list.
func baseDescription(name string) (string, bool) {
	for _, t := range tools {
		if t.name == name {
			md, err := toolDocs.ReadFile(t.key + ".md")
			if err != nil {
				return "", false
			}
			return strings.TrimRight(string(md), "\n"), true
		}
	}
	return "", false
}

// presentConversation is msgs with every tool call and result of ralph's
// tools in fam's terms; msgs itself is left unchanged, and returned as it
// is when nothing changes.
func presentConversation(fam family, present map[string]bool, msgs []conversation.Message) []conversation.Message {
	if len(fam.faces) == 0 {
		return msgs
	}
	var out []conversation.Message
	names := map[string]string{} // call id → the name shown
	for i, m := range msgs {
		changed, dirty := m, false
		switch {
		case len(m.ToolCalls) > 0:
			var calls []conversation.ToolCall
			for j, call := range m.ToolCalls {
				shown := presentCall(fam, present, call)
				names[call.ID] = shown.Name
				if shown != call {
					if calls == nil {
						calls = append([]conversation.ToolCall(nil), m.ToolCalls...)
					}
					calls[j] = shown
				}
			}
			if calls != nil {
				changed.ToolCalls, dirty = calls, true
			}
		case m.Role == conversation.RoleTool && m.Name != "":
			if shown, ok := names[m.ToolCallID]; ok && shown != m.Name {
				changed.Name, dirty = shown, true
			}
		}
		if dirty && out == nil {
			out = append(make([]conversation.Message, 0, len(msgs)), msgs[:i]...)
		}
		if out != nil {
			out = append(out, changed)
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// presentCall is a call of ralph's tool as fam shows it: under its face's
// name with its input in the face's shape, or as it is when the family
// has no face for the tool or its arguments do not map.
func presentCall(fam family, present map[string]bool, call conversation.ToolCall) conversation.ToolCall {
	fc := fam.faceFor(call.Name, present)
	if fc == nil {
		return call
	}
	args := json.RawMessage(call.Arguments)
	if strings.TrimSpace(call.Arguments) == "" {
		args = json.RawMessage("{}")
	}
	shown, ok := args, true
	switch {
	case fc.out != nil:
		shown, ok = fc.out(args)
	case fc.renames != nil:
		shown, ok = renameFields(args, invert(fc.renames))
	}
	if !ok {
		return call
	}
	return conversation.ToolCall{ID: call.ID, Name: fc.name, Arguments: string(shown)}
}

// Canonical returns a call the model made as the call of ralph's tool,
// with ralph's arguments (llm.ToolFaces): the model's own family's names
// first, then every other family's, then ralph's own. A call of no known
// name, or whose input cannot be mapped, keeps its name and its input, so
// that the tool door says what is wrong with it.
func (f *Faces) Canonical(model string, call conversation.ToolCall) conversation.ToolCall {
	own := f.FamilyFor(model)
	fc := lookupFace(own, call.Name)
	if fc == nil {
		return call
	}
	args := json.RawMessage(call.Arguments)
	if strings.TrimSpace(call.Arguments) == "" {
		args = json.RawMessage("{}")
	}
	tool, mapped, err := fc.input(args)
	if err != nil {
		// The tool's own decoding says what is wrong, under ralph's name.
		return conversation.ToolCall{ID: call.ID, Name: fc.tool, Arguments: call.Arguments}
	}
	return conversation.ToolCall{ID: call.ID, Name: tool, Arguments: string(mapped)}
}

// input is a call's input in fc's shape as the call of ralph's tool.
func (fc *face) input(args json.RawMessage) (string, json.RawMessage, error) {
	switch {
	case fc.in != nil:
		return fc.in(args)
	case fc.renames == nil:
		return fc.tool, args, nil
	}
	out, ok := renameFields(args, fc.renames)
	if !ok {
		return "", nil, fmt.Errorf("the arguments of %s are not a JSON object", fc.name)
	}
	return fc.tool, out, nil
}

// lookupFace is the face a model of family own means by name: its own
// family's, or else any family's (names are not case-sensitive where
// Claude Code's are spelled otherwise, "bash"); nil for ralph's own names
// and names no family has.
func lookupFace(own providers.ToolFamily, name string) *face {
	if isListName(name) {
		return nil
	}
	if fc := familyOf(own).named(name); fc != nil {
		return fc
	}
	for _, fam := range providers.Families() {
		if fc := familyOf(fam).named(name); fc != nil {
			return fc
		}
	}
	return nil
}

// named is the face of fam called name or one of its aliases.
func (fam family) named(name string) *face {
	for i := range fam.faces {
		fc := &fam.faces[i]
		if fc.hiddenFace {
			continue
		}
		if strings.EqualFold(fc.name, name) {
			return fc
		}
		for _, a := range fc.aliases {
			if strings.EqualFold(a, name) {
				return fc
			}
		}
	}
	return nil
}

// isListName reports whether name is the name of a tool of the list.
func isListName(name string) bool {
	for _, t := range tools {
		if t.name == name {
			return true
		}
	}
	return false
}

// FamilyNames are every name a family gives ralph's tool name, its
// aliases too: for rules and agent definitions that name a tool as a
// family does.
func FamilyNames(name string) []string {
	var out []string
	for _, fam := range providers.Families() {
		for _, fc := range familyOf(fam).faces {
			if fc.tool == name {
				out = append(out, fc.name)
				out = append(out, fc.aliases...)
			}
		}
	}
	return out
}

// byFamilyName is ralph's name of the tool some family calls name, "" for
// none.
func byFamilyName(name string) string {
	for _, fam := range providers.Families() {
		if fc := familyOf(fam).named(name); fc != nil {
			return fc.tool
		}
	}
	return ""
}

// renameFields is args, a JSON object, with each field renames names
// renamed to its value; the other fields are left out when renames has
// any, so that a field the other shape does not have is not sent.
func renameFields(args json.RawMessage, renames map[string]string) (json.RawMessage, bool) {
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil || in == nil {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(in))
	for from, v := range in {
		if to, ok := renames[from]; ok {
			out[to] = v
		}
	}
	b, err := marshalArgs(out)
	return b, err == nil
}

// invert is renames the other way round.
func invert(renames map[string]string) map[string]string {
	out := make(map[string]string, len(renames))
	for k, v := range renames {
		out[v] = k
	}
	return out
}
