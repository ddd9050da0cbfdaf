package schema

import (
	"encoding/json"
	"slices"
	"strings"
)

// OpenAI's strict structured outputs take a subset of JSON Schema, and of
// it require that every object lists all its properties in required and
// sets additionalProperties to false; the API refuses any other schema
// with strict on ("Invalid schema for response_format …"). strictForm
// makes that form of a schema where it keeps the schema's meaning: an
// optional property becomes a required one that may be null (and Check
// takes a null of such a property back out of the answer), and an object
// that named its properties and left additionalProperties out gets
// additionalProperties false (an answer without extra properties conforms
// to the schema as given). A schema that needs anything else (an object
// open to properties it does not name, a keyword strict mode does not
// take, a root that is not an object) goes with strict off instead.

// strictKeywords are the keywords strict mode takes (OpenAI's structured
// outputs guide, "Supported schemas").
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "anyOf": true,
	"description": true, "title": true, "$defs": true, "definitions": true, "$ref": true, "$schema": true, "$id": true,
	"format": true, "pattern": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true,
}

// strictForm is the strict form of tree, or nil when there is none.
func strictForm(tree map[string]any) json.RawMessage {
	if !isObject(tree) {
		return nil
	}
	out, ok := strictNode(deepCopy(tree))
	if !ok {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// strictNode makes node strict in place; ok is false when it cannot be
// without changing its meaning.
func strictNode(node any) (any, bool) {
	m, isMap := node.(map[string]any)
	if !isMap {
		// A boolean schema (true: anything) has no strict form.
		return nil, false
	}
	for k := range m {
		if !strictKeywords[k] {
			return nil, false
		}
	}
	if isObject(m) {
		props, _ := m["properties"].(map[string]any)
		ap, hasAP := m["additionalProperties"]
		if hasAP && ap != false {
			return nil, false
		}
		if props == nil && !hasAP {
			// An object of any properties: false would allow only {}.
			return nil, false
		}
		m["additionalProperties"] = false
		required := map[string]bool{}
		var names []string
		if list, ok := m["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok && !required[s] {
					required[s] = true
					names = append(names, s)
				}
			}
		}
		var optional []string
		for name, p := range props {
			sp, ok := strictNode(p)
			if !ok {
				return nil, false
			}
			if !required[name] {
				sp = nullable(sp)
				optional = append(optional, name)
			}
			props[name] = sp
		}
		slices.Sort(optional)
		all := make([]any, 0, len(names)+len(optional))
		for _, n := range append(names, optional...) {
			if _, ok := props[n]; ok {
				all = append(all, n)
			}
		}
		if len(all) != len(names)+len(optional) {
			// required names a property the schema does not define.
			return nil, false
		}
		m["required"] = all
	}
	if items, ok := m["items"]; ok {
		si, ok := strictNode(items)
		if !ok {
			return nil, false
		}
		m["items"] = si
	}
	if list, ok := m["anyOf"].([]any); ok {
		for i, b := range list {
			sb, ok := strictNode(b)
			if !ok {
				return nil, false
			}
			list[i] = sb
		}
	}
	for _, defs := range []string{"$defs", "definitions"} {
		if d, ok := m[defs].(map[string]any); ok {
			for name, s := range d {
				ss, ok := strictNode(s)
				if !ok {
					return nil, false
				}
				d[name] = ss
			}
		}
	}
	return m, true
}

// isObject reports a schema of objects.
func isObject(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, props := m["properties"]
	return props
}

// nullable is a property's schema that also takes null.
func nullable(p any) any {
	m, ok := p.(map[string]any)
	if !ok {
		return p
	}
	_, hasEnum := m["enum"]
	_, hasConst := m["const"]
	if t, ok := m["type"].(string); ok && !hasEnum && !hasConst {
		if t != "null" {
			m["type"] = []any{t, "null"}
		}
		return m
	}
	return map[string]any{"anyOf": []any{m, map[string]any{"type": "null"}}}
}

// dropAddedNulls takes v, an answer to the strict form, back to the
// schema's own: a null of a property the schema (node, within root)
// leaves optional is left out, in every object the schema describes by
// its properties and items.
func dropAddedNulls(root, node map[string]any, v any) any {
	node = deref(root, node)
	switch val := v.(type) {
	case map[string]any:
		props, _ := node["properties"].(map[string]any)
		required := map[string]bool{}
		if list, ok := node["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		for k, x := range val {
			ps, known := props[k].(map[string]any)
			if !known {
				continue
			}
			if x == nil && !required[k] {
				delete(val, k)
				continue
			}
			val[k] = dropAddedNulls(root, ps, x)
		}
	case []any:
		if is, ok := node["items"].(map[string]any); ok {
			for i, x := range val {
				val[i] = dropAddedNulls(root, is, x)
			}
		}
	}
	return v
}

// deref is the schema a local $ref ("#/$defs/x", "#/definitions/x")
// points to, or node itself.
func deref(root, node map[string]any) map[string]any {
	for range 16 {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		path, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			return node
		}
		var cur any = root
		for _, part := range strings.Split(path, "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				return node
			}
			cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return node
		}
		node = next
	}
	return node
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}
