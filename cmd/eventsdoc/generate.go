package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/scripts/cli"
	"github.com/ralph-dev/ralph/scripts/contract"
)

// Generate writes docs/events.md from the contract's lines
// (cli.ContractLines), reading field comments beneath root.
func Generate(root string) ([]byte, error) {
	g := &generator{docs: &comments{root: root, byPackage: map[string]map[string]map[string]string{}}, defs: map[string]any{}}
	var md bytes.Buffer
	md.WriteString(intro)
	var cases []any
	eventFields := map[string]bool{}
	for _, l := range cli.ContractLines() {
		fields, err := jsonFields(reflect.TypeOf(l.Value), g.docs)
		if err != nil {
			return nil, err
		}
		if l.Fields != nil {
			for _, f := range fields {
				eventFields[f.name] = eventFields[f.name] || false
			}
			if fields, err = pick(fields, append(slices.Clone(cli.EventFields), l.Fields...)); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Type, err)
			}
			for _, f := range fields {
				eventFields[f.name] = true
			}
		}
		for i, f := range fields {
			if slices.Contains(l.Sometimes, f.name) {
				fields[i].always = false
			}
		}
		fmt.Fprintf(&md, "\n### %s\n\n%s\n\n", l.Type, l.About)
		def, err := g.object(&md, fields, l.Type)
		if err != nil {
			return nil, err
		}
		g.defs[l.Type] = def
		cases = append(cases, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"type": map[string]any{"const": l.Type}}, "required": []string{"type"}},
			"then": map[string]any{"$ref": "#/$defs/" + l.Type},
		})
	}
	// An event type added to the coordinator must be given a line too.
	types, err := eventTypes(root)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		if !slices.Contains(cli.NotStreamed, event.Type(t)) &&
			!slices.ContainsFunc(cli.ContractLines(), func(l cli.ContractLine) bool { return l.Type == t }) {
			return nil, fmt.Errorf("the event type %q is in no line of the contract (cli.ContractLines) and not in cli.NotStreamed", t)
		}
	}
	// A field added to the event must be given to the kinds that carry
	// it, or the contract would not say it exists.
	for name, used := range eventFields {
		if !used {
			return nil, fmt.Errorf("the event's %q is in no kind's Fields (cli.ContractLines)", name)
		}
	}
	md.WriteString("\n## Objects inside lines\n")
	for i := 0; i < len(g.nested); i++ { // object appends to g.nested as it meets new types
		t := g.nested[i]
		fields, err := jsonFields(t, g.docs)
		if err != nil {
			return nil, err
		}
		about, err := g.docs.typeComment(t)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&md, "\n### %s object\n\n%s\n\n", t.Name(), about)
		def, err := g.object(&md, fields, "")
		if err != nil {
			return nil, err
		}
		g.defs[t.Name()] = def
	}
	schema := map[string]any{
		"$schema":  "https://json-schema.org/draft/2020-12/schema",
		"title":    fmt.Sprintf("ralph's JSON lines, schema_version %d", event.SchemaVersion),
		"type":     "object",
		"required": []string{"type", "schema_version"},
		"properties": map[string]any{
			"type":           map[string]any{"type": "string"},
			"schema_version": map[string]any{"const": event.SchemaVersion},
		},
		"allOf": cases,
		"$defs": g.defs,
	}
	js, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal the schema: %w", err)
	}
	fmt.Fprintf(&md, "\n## JSON Schema\n\n```json\n%s\n```\n", js)
	return md.Bytes(), nil
}

// pick keeps the fields named, in their order in the type.
func pick(fields []field, names []string) ([]field, error) {
	var out []field
	for _, f := range fields {
		if slices.Contains(names, f.name) {
			out = append(out, f)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(out, func(f field) bool { return f.name == n }) {
			return nil, fmt.Errorf("no field %q", n)
		}
	}
	return out, nil
}

// generator collects the schema's definitions and the object types met
// inside lines, each documented once.
type generator struct {
	docs   *comments
	defs   map[string]any
	nested []reflect.Type
}

// object writes fields' table to md and returns their schema. A line's
// schema (kind non-empty) says its type.
func (g *generator) object(md *bytes.Buffer, fields []field, kind string) (map[string]any, error) {
	md.WriteString("| field | JSON type | always there | meaning |\n|---|---|---|---|\n")
	props := map[string]any{}
	required := []string{}
	for _, f := range fields {
		schema, words := g.jsonType(f.typ, !f.always)
		if f.name == "type" && kind != "" {
			schema, words = map[string]any{"const": kind}, fmt.Sprintf("string `%q`", kind)
		}
		props[f.name] = schema
		always := "no"
		if f.always {
			always, required = "yes", append(required, f.name)
		}
		doc := f.doc
		if doc == "" {
			doc = "—"
		}
		fmt.Fprintf(md, "| `%s` | %s | %s | %s |\n", f.name, words, always, strings.ReplaceAll(doc, "|", `\|`))
	}
	return map[string]any{"type": "object", "properties": props, "required": required}, nil
}

// jsonType is t's schema and its words in a table. omitted says the
// member is left out when empty: a pointer is then never null.
func (g *generator) jsonType(t reflect.Type, omitted bool) (map[string]any, string) {
	nullable := func(s map[string]any, words string) (map[string]any, string) {
		if omitted {
			return s, words
		}
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}, words + " or null"
	}
	switch t {
	case reflect.TypeFor[contract.Version]():
		return map[string]any{"const": event.SchemaVersion}, fmt.Sprintf("integer (%d)", event.SchemaVersion)
	case reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}, "string (RFC 3339 time)"
	case reflect.TypeFor[json.RawMessage]():
		return map[string]any{}, "any JSON"
	case reflect.TypeFor[time.Duration]():
		return map[string]any{"type": "integer"}, "integer (nanoseconds)"
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, "string"
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, "integer"
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, "number"
	case reflect.Pointer:
		s, words := g.jsonType(t.Elem(), true)
		return nullable(s, words)
	case reflect.Slice:
		s, words := g.jsonType(t.Elem(), true)
		return nullable(map[string]any{"type": "array", "items": s}, "array of "+words)
	case reflect.Map:
		s, words := g.jsonType(t.Elem(), true)
		return map[string]any{"type": "object", "additionalProperties": s}, "object of " + words
	case reflect.Struct:
		if !slices.Contains(g.nested, t) {
			g.nested = append(g.nested, t)
		}
		return map[string]any{"$ref": "#/$defs/" + t.Name()}, fmt.Sprintf("object ([%s](#%s-object))", t.Name(), strings.ToLower(t.Name()))
	}
	return map[string]any{}, "any JSON"
}

// intro is the page's text before the tables.
var intro = fmt.Sprintf(`<!-- Generated by cmd/eventsdoc from the Go types (go generate ./scripts/cli); do not edit. -->
# The event contract

Every line ralph prints as JSON is one object of this contract: `+"`--output-format stream-json`"+` of a
one-shot, a script, `+"`ralph run`"+`, `+"`ralph plan`"+` and `+"`ralph review`"+`, `+"`ralph watch --json`"+` (also of a run
on Temporal), `+"`ralph logs --json`"+`, and the last object of `+"`--output-format json`"+` (`+"`result`"+`, `+"`plan`"+`
or `+"`review`"+`). This page is generated from the Go types those lines are
marshalled from, and the end-to-end tests check every line of every face against its schema.

- Every line carries `+"`type`"+` and `+"`schema_version`"+` (now %d).
- The first line of a stream is `+"`init`"+`, with the session's id: give it to `+"`ralph --resume ID`"+`
  (its stream begins with the same id) or look it up with `+"`ralph sessions`"+`. The last line of a
  one-shot, a run or a script step is `+"`result`"+`; `+"`ralph plan`"+` and `+"`ralph review`"+` end with their own
  object instead. `+"`ralph --resume ID --output-format stream-json`"+` goes on with session ID and says so first.
- Events of child agents are on the same stream: `+"`agent_id`"+` says whose ("main" is the coordinator).

## Changing the contract

- Adding a field or a kind of line keeps the version.
- Removing or renaming a field, changing its type, or changing what a field or a kind means raises
  `+"`schema_version`"+` by one, and this page says what changed.
- Consumers must ignore fields and kinds of line they do not know, so that additions break nobody.

## Lines
`, event.SchemaVersion)
