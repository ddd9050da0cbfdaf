package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/workers"
)

// View is a Toolset as an agent of one role sees it: the tools of the
// list its role is not given left out, and the role's own tools (the task
// loop's complete_task, a review's report) added or replacing the base's
// of the same name. It shares everything else with its base — the
// per-path write locks, the approver, the registered tools — so agents
// working through views of one Toolset serialise their writes to a file
// and cannot lose each other's edits.
type View struct {
	base  *Toolset
	role  Role
	over  map[string]Tool
	added []string
	// only, when set, are the names of the tools the view may offer at
	// all (Only): an agent definition's list.
	only map[string]bool
}

// For returns t as an agent of role sees it, with own tools added (or
// replacing the base's of the same name). Every model request's tools
// come from a Toolset or a View of it: the role and the session's mode
// (Toolset.Mode) filter the one list.
func (t *Toolset) For(role Role, own ...Tool) *View {
	v := &View{base: t, role: role, over: map[string]Tool{}}
	for _, tool := range own {
		if rolesOf(tool)&role == 0 {
			continue
		}
		name := tool.Def().Name
		if _, ok := v.over[name]; !ok && !t.has(name) {
			v.added = append(v.added, name)
		}
		v.over[name] = tool
	}
	return v
}

func (t *Toolset) has(name string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.tools[name]
	return ok
}

// Only is v narrowed to the tools named: an agent definition's tools
// (workers/agentdefs). It offers no tool v does not, so a list can only
// take tools away; v itself is unchanged.
func (v *View) Only(names []string) *View {
	n := *v
	n.only = make(map[string]bool, len(names))
	for _, name := range names {
		n.only[name] = true
	}
	return &n
}

// narrowedOut reports whether Only left the tool name out.
func (v *View) narrowedOut(name string) bool { return v.only != nil && !v.only[name] }

// visible reports whether the view offers the base's tool.
func (v *View) visible(tool Tool) bool {
	name := tool.Def().Name
	if v.narrowedOut(name) {
		return false
	}
	_, over := v.over[name]
	return over || rolesOf(tool)&v.role != 0
}

// Definitions lists the visible tools in the base's order, added ones last.
func (v *View) Definitions() []ToolDef {
	var defs []ToolDef
	m := v.base.Mode()
	v.base.mu.RLock()
	base := v.base.all()
	v.base.mu.RUnlock()
	for _, tool := range base {
		if !v.visible(tool) {
			continue
		}
		d := tool.Def()
		if o, ok := v.over[d.Name]; ok {
			d = o.Def()
		}
		defs = append(defs, d)
	}
	for _, name := range v.added {
		if m.Allows(Info(name)) && !v.narrowedOut(name) {
			defs = append(defs, v.over[name].Def())
		}
	}
	return defs
}

// tool is the base's tool name, nil when it has none.
func (v *View) tool(name string) Tool {
	v.base.mu.RLock()
	defer v.base.mu.RUnlock()
	if tool, ok := v.base.tools[name]; ok {
		return tool
	}
	for _, st := range v.base.sourceTools() {
		if st.Def().Name == name {
			return st
		}
	}
	return nil
}

// hidden reports whether the role is not offered the base's tool name.
func (v *View) hidden(name string) bool {
	if v.narrowedOut(name) {
		return true
	}
	if _, over := v.over[name]; over {
		return false
	}
	tool := v.tool(name)
	return tool != nil && !v.visible(tool)
}

// Offer is the base's (llm.ToolFaces): a view offers its tools in the
// model's terms as its base does.
func (v *View) Offer(model string, defs []ToolDef, msgs []conversation.Message) ([]ToolDef, []conversation.Message) {
	return v.base.Offer(model, defs, msgs)
}

// Canonical is the base's (llm.ToolFaces).
func (v *View) Canonical(model string, call conversation.ToolCall) conversation.ToolCall {
	return v.base.Canonical(model, call)
}

// Family is the base's.
func (v *View) Family(model string) providers.ToolFamily { return v.base.Family(model) }

// Prepare prepares the base's sources: a view shares them.
func (v *View) Prepare(ctx context.Context) { v.base.Prepare(ctx) }

// Unprepared reports whether the base has a source to prepare.
func (v *View) Unprepared() bool { return v.base.Unprepared() }

// WillAsk is the base's, for a tool the view neither hides nor replaces.
func (v *View) WillAsk(name string, args json.RawMessage) bool {
	if _, over := v.over[name]; over || v.hidden(name) {
		return false
	}
	return v.base.WillAsk(name, args)
}

// Call runs a visible tool, through its hooks when ctx carries some
// (WithHooks).
func (v *View) Call(ctx context.Context, name string, args json.RawMessage) workers.Result {
	if v.hidden(name) {
		var names []string
		for _, d := range v.Definitions() {
			names = append(names, d.Name)
		}
		return errResult("tool %q is not available to this agent; available tools: %s", name, strings.Join(names, ", "))
	}
	if h := hooksOf(ctx); h != nil {
		return hooked(ctx, h, v.base, name, args, func(ctx context.Context, args json.RawMessage) workers.Result {
			return v.call(ctx, name, args)
		})
	}
	return v.call(ctx, name, args)
}

// call runs a visible tool; its hooks, if any, have fired or will (Call).
func (v *View) call(ctx context.Context, name string, args json.RawMessage) workers.Result {
	if o, ok := v.over[name]; ok {
		if m := v.base.Mode(); !m.Allows(Info(name)) {
			return errResult("%s", m.refusal(name))
		}
		res := v.base.stepped(name, func() workers.Result { return o.Run(ctx, args) })
		res.Output = workers.TruncateMiddle(res.Output, v.base.ws.MaxOutput()+resultSlack)
		return res
	}
	return v.base.call(ctx, name, args)
}
