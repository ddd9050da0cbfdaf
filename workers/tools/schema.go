package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// A tool's params struct is the single source of its JSON schema and of
// its required arguments. Each field with a json tag is one property:
//
//	Path string `json:"path" required:"true" description:"File path, relative to the project root."`
//
// The property's type comes from the field's Go type (string, integer for
// whole numbers, number for floats, boolean, array of the element's
// type, or an object described as a params struct is), or from a type tag (and an items tag for an array's element
// type) where the field is decoded by hand; description, minimum and
// maximum come from the tags of those names, enum:"a,b" lists a string's
// values, items:"object" on a slice of structs gives its elements' own
// properties, and required:"true" puts the argument on the required list,
// which decodeArgs also checks. Properties are listed in field order.

// schemaOf is one params type's schema and required list.
type schemaOf struct {
	schema   json.RawMessage
	required []string
}

var schemas sync.Map // reflect.Type → *schemaOf

// Schema returns the JSON schema object of a tool's params struct (a
// value or a pointer to one).
func Schema(params any) json.RawMessage { return schemaFor(reflect.TypeOf(params)).schema }

// Required returns the names of the arguments a params struct requires,
// in field order.
func Required(params any) []string { return schemaFor(reflect.TypeOf(params)).required }

func schemaFor(t reflect.Type) *schemaOf {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := schemas.Load(t); ok {
		return s.(*schemaOf)
	}
	s := buildSchema(t)
	schemas.Store(t, s)
	return s
}

func buildSchema(t reflect.Type) *schemaOf {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools: tool params %s is not a struct", t))
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	s := &schemaOf{}
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(jsonString(name))
		b.WriteByte(':')
		b.Write(property(f))
		if f.Tag.Get("required") == "true" {
			s.required = append(s.required, name)
		}
	}
	b.WriteByte('}')
	if len(s.required) > 0 {
		b.WriteString(`,"required":[`)
		for i, r := range s.required {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(r))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	s.schema = json.RawMessage(b.Bytes())
	return s
}

// property is the schema of one field.
func property(f reflect.StructField) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	switch typ := f.Tag.Get("type"); {
	case typ == "" && f.Tag.Get("items") == "object":
		// A list of objects whose fields the model must know (update_plan's
		// steps): the element struct's own schema, built as a params
		// struct's is.
		fmt.Fprintf(&b, `"type":"array","items":%s`, schemaFor(f.Type.Elem()).schema)
	case typ == "":
		b.WriteString(typeSchema(f.Type))
	case f.Tag.Get("items") != "":
		fmt.Fprintf(&b, `"type":%s,"items":{"type":%s}`, jsonString(typ), jsonString(f.Tag.Get("items")))
	default:
		fmt.Fprintf(&b, `"type":%s`, jsonString(typ))
	}
	for _, key := range []string{"minimum", "maximum"} {
		if v := f.Tag.Get(key); v != "" {
			if !json.Valid([]byte(v)) {
				panic(fmt.Sprintf("tools: field %s: %s %q is not a JSON number", f.Name, key, v))
			}
			fmt.Fprintf(&b, `,"%s":%s`, key, v)
		}
	}
	if e := f.Tag.Get("enum"); e != "" {
		b.WriteString(`,"enum":[`)
		for i, v := range strings.Split(e, ",") {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(v))
		}
		b.WriteByte(']')
	}
	if d := f.Tag.Get("description"); d != "" {
		b.WriteString(`,"description":`)
		b.Write(jsonString(d))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// typeSchema is the "type" (and "items") of a Go type, without braces.
func typeSchema(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return `"type":"string"`
	case reflect.Bool:
		return `"type":"boolean"`
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return `"type":"integer"`
	case reflect.Float32, reflect.Float64:
		return `"type":"number"`
	case reflect.Slice, reflect.Array:
		return `"type":"array","items":{` + typeSchema(t.Elem()) + `}`
	case reflect.Struct:
		// A struct (an element of a list of objects, edit_file's edits)
		// is described as a tool's params are, its fields and required
		// list included, so the model sees the whole shape.
		s := schemaFor(t).schema
		return string(s[1 : len(s)-1])
	}
	return `"type":"object"`
}

// jsonString encodes s as a JSON string, leaving <, > and & as they are.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}
