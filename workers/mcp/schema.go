package mcp

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// MCP servers describe their tools' arguments with whatever JSON Schema
// their library writes: drafts' "$schema" and "$id", "$ref" into "$defs",
// "const", "oneOf", "exclusiveMinimum", "examples", type arrays with
// "null", schemas as "additionalProperties". OpenAI takes most of it;
// stricter servers (Gemini's OpenAI endpoint, some vLLM and llama.cpp
// builds) refuse a request over one unknown keyword, for every tool at
// once. So each schema is rewritten into the plain subset every server
// reads before the model sees it: references inlined, "const" as a
// one-value "enum", "oneOf" as "anyOf", single "allOf" merged, "null"
// dropped from type lists, keywords outside the subset dropped, and the
// top level always `{"type": "object", "properties": {...}}` with
// "required" naming only properties that exist.

// maxRefDepth bounds how deep references are inlined; a recursive
// schema is cut there to an open schema.
const maxRefDepth = 6

// keptScalar are the keywords kept as they are.
var keptScalar = []string{"description", "title", "enum", "default", "minimum", "maximum",
	"minLength", "maxLength", "minItems", "maxItems", "pattern", "nullable"}

// keptFormats are the string formats strict servers accept.
var keptFormats = []string{"date-time", "date", "time", "email", "uri", "uuid"}

// CleanSchema returns the tool's input schema rewritten for strict
// servers (see above); schema is the server's, decoded from JSON.
func CleanSchema(schema any) json.RawMessage {
	root, _ := schema.(map[string]any)
	c := cleaner{defs: map[string]any{}}
	for _, key := range []string{"$defs", "definitions"} {
		if d, ok := root[key].(map[string]any); ok {
			for name, v := range d {
				c.defs["#/"+key+"/"+name] = v
			}
		}
	}
	out, _ := c.clean(root, 0).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	out["type"] = "object"
	props, ok := out["properties"].(map[string]any)
	if !ok {
		props = map[string]any{}
		out["properties"] = props
	}
	if req, ok := out["required"].([]any); ok {
		var keep []any
		for _, r := range req {
			if s, ok := r.(string); ok && props[s] != nil && !slices.Contains(keep, any(s)) {
				keep = append(keep, s)
			}
		}
		if len(keep) > 0 {
			out["required"] = keep
		} else {
			delete(out, "required")
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return data
}

type cleaner struct {
	defs map[string]any
}

// overlay is base with the keys of m but skip laid over it, in a map of
// its own.
func overlay(base, m map[string]any, skip string) map[string]any {
	merged := maps.Clone(base)
	for k, v := range m {
		if k != skip {
			merged[k] = v
		}
	}
	return merged
}

// alternatives cleans an anyOf, oneOf or allOf's list into out: a null
// alternative is left out,
// one alternative left is merged in, more stay an anyOf.
func (c cleaner) alternatives(list []any, depth int, out map[string]any) {
	var alts []any
	for _, alt := range list {
		if am, ok := alt.(map[string]any); ok && am["type"] == "null" {
			continue
		}
		alts = append(alts, c.clean(alt, depth))
	}
	switch {
	case len(alts) == 1:
		for ak, av := range alts[0].(map[string]any) {
			if _, set := out[ak]; !set {
				out[ak] = av
			}
		}
	case len(alts) > 1:
		out["anyOf"] = alts
	}
}

func (c cleaner) clean(node any, depth int) any {
	m, ok := node.(map[string]any)
	if !ok {
		// true (anything) and other odd schemas become an open schema.
		return map[string]any{}
	}
	if ref, ok := m["$ref"].(string); ok {
		target, found := c.defs[ref]
		t, isMap := target.(map[string]any)
		if !found || !isMap || depth >= maxRefDepth {
			open := map[string]any{}
			if d, ok := m["description"].(string); ok {
				open["description"] = d
			}
			return open
		}
		return c.clean(overlay(t, m, "$ref"), depth+1)
	}
	if all, ok := m["allOf"].([]any); ok && len(all) == 1 {
		if inner, ok := all[0].(map[string]any); ok {
			return c.clean(overlay(inner, m, "allOf"), depth)
		}
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "type":
			if t := cleanType(v); t != nil {
				out["type"] = t
			}
		case "const":
			out["enum"] = []any{v}
		case "format":
			if s, ok := v.(string); ok && slices.Contains(keptFormats, s) {
				out["format"] = s
			}
		case "properties":
			if props, ok := v.(map[string]any); ok {
				cp := make(map[string]any, len(props))
				for name, p := range props {
					cp[name] = c.clean(p, depth)
				}
				out["properties"] = cp
			}
		case "items":
			if list, ok := v.([]any); ok { // a tuple: its first item's schema
				if len(list) > 0 {
					out["items"] = c.clean(list[0], depth)
				}
				continue
			}
			out["items"] = c.clean(v, depth)
		case "anyOf", "oneOf", "allOf":
			if list, ok := v.([]any); ok && len(list) > 0 {
				c.alternatives(list, depth, out)
			}
		case "required":
			if list, ok := v.([]any); ok {
				out["required"] = list
			}
		case "additionalProperties":
			if b, ok := v.(bool); ok {
				out[k] = b
			}
		default:
			if slices.Contains(keptScalar, k) {
				out[k] = v
			}
		}
	}
	if _, ok := out["type"]; !ok {
		switch {
		case out["properties"] != nil:
			out["type"] = "object"
		case out["items"] != nil:
			out["type"] = "array"
		}
	}
	return out
}

// cleanType drops "null" from a list of types: an argument the model may
// leave out needs no null, and strict servers take one type, not a list.
func cleanType(v any) any {
	list, ok := v.([]any)
	if !ok {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			return s
		}
		return nil
	}
	var types []any
	for _, t := range list {
		if s, ok := t.(string); ok && s != "null" {
			types = append(types, s)
		}
	}
	switch len(types) {
	case 0:
		return nil
	case 1:
		return types[0]
	}
	return types
}
