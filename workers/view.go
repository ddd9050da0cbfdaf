package workers

import (
	"context"
	"encoding/json"
	"strings"
)

// View is a Toolset seen through a filter: some tools hidden, some added or
// replaced. It shares everything else with its base — the per-path write
// locks, the approver, the registered tools — so agents working through
// views of one Toolset serialise their writes to a file and cannot lose
// each other's edits.
type View struct {
	base  *Toolset
	hide  map[string]bool
	over  map[string]Tool
	added []string
}

// View returns a view of t without the hidden tools and with extra tools
// added (or replacing built-ins of the same name).
func (t *Toolset) View(hide []string, extra ...Tool) *View {
	v := &View{base: t, hide: map[string]bool{}, over: map[string]Tool{}}
	for _, h := range hide {
		v.hide[h] = true
	}
	for _, tool := range extra {
		name := tool.Def().Name
		if _, ok := v.over[name]; !ok && !t.has(name) {
			v.added = append(v.added, name)
		}
		v.over[name] = tool
		delete(v.hide, name)
	}
	return v
}

func (t *Toolset) has(name string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.tools[name]
	return ok
}

// Definitions lists the visible tools in the base's order, added ones last.
func (v *View) Definitions() []ToolDef {
	var defs []ToolDef
	for _, d := range v.base.Definitions() {
		if v.hide[d.Name] {
			continue
		}
		if o, ok := v.over[d.Name]; ok {
			d = o.Def()
		}
		defs = append(defs, d)
	}
	for _, name := range v.added {
		defs = append(defs, v.over[name].Def())
	}
	return defs
}

// Prepare prepares the base's sources: a view shares them.
func (v *View) Prepare(ctx context.Context) { v.base.Prepare(ctx) }

// Unprepared reports whether the base has a source to prepare.
func (v *View) Unprepared() bool { return v.base.Unprepared() }

// WillAsk is the base's, for a tool the view neither hides nor replaces.
func (v *View) WillAsk(name string, args json.RawMessage) bool {
	if _, over := v.over[name]; over || v.hide[name] {
		return false
	}
	return v.base.WillAsk(name, args)
}

// Call runs a visible tool.
func (v *View) Call(ctx context.Context, name string, args json.RawMessage) Result {
	if v.hide[name] {
		var names []string
		for _, d := range v.Definitions() {
			names = append(names, d.Name)
		}
		return errResult("tool %q is not available to this agent; available tools: %s", name, strings.Join(names, ", "))
	}
	if o, ok := v.over[name]; ok {
		res := o.Run(ctx, args)
		res.Output = TruncateMiddle(res.Output, v.base.maxOut+resultSlack)
		return res
	}
	return v.base.Call(ctx, name, args)
}
