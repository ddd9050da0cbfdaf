// Package schema is the JSON Schema a one-shot's final answer must
// conform to (--output-schema FILE, --json-schema JSON): read and compiled
// once, before any model call, with github.com/google/jsonschema-go; turned
// into the form OpenAI's strict structured outputs take where that keeps
// its meaning (strict.go); and the check of an answer against it (Check).
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ralph-dev/ralph/coordinator/llm"
)

// Sentinel errors callers branch on.
var (
	// ErrBadSchema: the schema is no JSON, or no JSON Schema a validator
	// takes. The one-shot exits 2 on it, before any model call.
	ErrBadSchema = errors.New("bad output schema")
	// ErrNotConforming: an answer is not JSON that conforms to the schema.
	ErrNotConforming = errors.New("the answer does not conform to the output schema")
)

// Name is the schema's name on the wire (response_format's json_schema
// name, text.format's name): OpenAI requires one, of letters, digits,
// underscores and dashes.
const Name = "final_answer"

// Schema is a compiled output schema.
type Schema struct {
	// raw is the schema as given, compacted.
	raw json.RawMessage
	// tree is raw decoded, for the strict form and the answer's walk.
	tree map[string]any
	// strict is the schema in the form OpenAI's strict mode takes, nil
	// when no such form keeps its meaning (strict.go).
	strict   json.RawMessage
	resolved *jsonschema.Resolved
}

// Parse compiles a schema; where names it in the error ("--output-schema
// answer.json", "--json-schema").
func Parse(data []byte, where string) (*Schema, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("%w: %s is not JSON (%s)", ErrBadSchema, where, jsonProblem(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s has more after its JSON object", ErrBadSchema, where)
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a JSON Schema: a schema is a JSON object such as {\"type\":\"object\",\"properties\":{…}}", ErrBadSchema, where)
	}
	if bad := badType(obj); bad != "" {
		return nil, fmt.Errorf("%w: %s is not a JSON Schema: %s", ErrBadSchema, where, bad)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(data, &js); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON Schema: %s", ErrBadSchema, where, jsonProblem(err))
	}
	rs, err := js.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON Schema a validator takes: %s", ErrBadSchema, where, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrBadSchema, where, err)
	}
	s := &Schema{raw: compact.Bytes(), tree: obj, resolved: rs}
	s.strict = strictForm(obj)
	return s, nil
}

// jsonProblem is a decoding error without Go's type names.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		return fmt.Sprintf("%q is a JSON %s where a schema has %s", field, te.Value, kindOf(te.Type))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// kindOf names a Go type as the JSON it decodes.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64:
		return "a number"
	}
	return "another kind of value"
}

// jsonTypes are the names "type" takes.
var jsonTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// badType is the first "type" in the schema that names no JSON type (the
// validator would take {"type":"objekt"} and let nothing through), or "".
func badType(node any) string {
	switch n := node.(type) {
	case map[string]any:
		if t, ok := n["type"]; ok {
			names, _ := t.([]any)
			if s, ok := t.(string); ok {
				names = []any{s}
			}
			if len(names) == 0 {
				return fmt.Sprintf("\"type\" is %s, not a type's name or a list of them", compactJSON(t))
			}
			for _, name := range names {
				if s, ok := name.(string); !ok || !jsonTypes[s] {
					return fmt.Sprintf("\"type\" names %s, which is none of object, array, string, number, integer, boolean and null", compactJSON(name))
				}
			}
		}
		for k, v := range n {
			switch k {
			case "enum", "const", "default", "examples":
				continue
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
				// Maps of names to schemas: a property called "type"
				// is no keyword.
				if named, ok := v.(map[string]any); ok {
					for _, sub := range named {
						if bad := badType(sub); bad != "" {
							return bad
						}
					}
					continue
				}
			}
			if bad := badType(v); bad != "" {
				return bad
			}
		}
	case []any:
		for _, v := range n {
			if bad := badType(v); bad != "" {
				return bad
			}
		}
	}
	return ""
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Wire is the schema as a request carries it: the strict form with
// strict on where there is one, else the schema as given with strict
// off, which the provider follows as far as it can and Check makes sure
// of.
func (s *Schema) Wire() *llm.OutputSchema {
	if s.strict != nil {
		return &llm.OutputSchema{Name: Name, Schema: s.strict, Strict: true, Given: s.raw}
	}
	return &llm.OutputSchema{Name: Name, Schema: s.raw}
}

// Raw is the schema as given.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Strict reports whether the schema goes to OpenAI in strict mode.
func (s *Schema) Strict() bool { return s.strict != nil }

// Check parses an answer and validates it against the schema: the JSON
// value, compacted, or an ErrNotConforming error that says why in words
// the model can act on. A value of the strict form's (null for a
// property the schema leaves optional) is first taken back to the
// schema's own (the property left out).
func (s *Schema) Check(answer string) (json.RawMessage, error) {
	text := unfence(answer)
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: it is not JSON (%s)", ErrNotConforming, jsonProblem(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: it has more after its JSON value", ErrNotConforming)
	}
	if s.strict != nil {
		v = dropAddedNulls(s.tree, s.tree, v)
	}
	// The validator compares numbers as float64s and ints, not
	// json.Number: the value goes through a plain decode.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotConforming, err)
	}
	var plain any
	if err := json.Unmarshal(b, &plain); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotConforming, err)
	}
	if err := s.resolved.Validate(plain); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotConforming, err)
	}
	return b, nil
}

// unfence is an answer without the Markdown code fence a model may put
// around JSON it was not held to.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	t = strings.TrimSuffix(t, "```")
	_, body, ok := strings.Cut(t, "\n")
	if !ok {
		return s
	}
	return strings.TrimSpace(body)
}
