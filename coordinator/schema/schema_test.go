package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestBadSchemasAreOneSentence: what is no JSON, no object or no JSON
// Schema is refused before anything else, naming where it came from.
func TestBadSchemasAreOneSentence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"type":"object",`, "is not JSON"},
		{`[1,2]`, "is not a JSON Schema"},
		{`{"type":"objekt"}`, `"type" names "objekt"`},
		{`{"$ref":"#/nope"}`, "not a JSON Schema a validator takes"},
		{`{"type":"object","properties":[]}`, `"properties" is a JSON array where a schema has an object`},
		{`{"type":"object"} {}`, "has more after"},
	} {
		_, err := Parse([]byte(c.in), "--json-schema")
		if !errors.Is(err, ErrBadSchema) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--json-schema") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", c.in, err)
		}
	}
}

// TestStrictFormKeepsTheMeaning: optional properties become nullable
// required ones and objects get additionalProperties false; a null the
// model writes for an optional property is taken back out before the
// answer is validated against the schema as given.
func TestStrictFormKeepsTheMeaning(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(`{"type":"object","properties":{"title":{"type":"string"},"type":{"type":"string","enum":["a","b"]},"score":{"type":"integer","minimum":0},
		"tags":{"type":"array","items":{"$ref":"#/$defs/tag"}}},"required":["title"],
		"$defs":{"tag":{"type":"object","properties":{"name":{"type":"string"},"weight":{"type":"number"}},"required":["name"]}}}`), "x")
	if err != nil {
		t.Fatal(err)
	}
	w := s.Wire()
	if !w.Strict || w.Given == nil {
		t.Fatalf("no strict form: %+v", w)
	}
	var strict map[string]any
	if err := json.Unmarshal(w.Schema, &strict); err != nil {
		t.Fatal(err)
	}
	if strict["additionalProperties"] != false || len(strict["required"].([]any)) != 4 {
		t.Fatalf("root not strict: %s", w.Schema)
	}
	if !strings.Contains(string(w.Schema), `"score":{"minimum":0,"type":["integer","null"]}`) ||
		!strings.Contains(string(w.Schema), `"weight":{"type":["number","null"]}`) {
		t.Fatalf("optional properties not nullable: %s", w.Schema)
	}
	got, err := s.Check(`{"title":"t","score":null,"type":null,"tags":[{"name":"a","weight":null}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"tags":[{"name":"a"}],"title":"t"}` {
		t.Fatalf("nulls not taken out: %s", got)
	}
	if _, err := s.Check("```json\n{\"title\":\"t\"}\n```"); err != nil {
		t.Fatalf("a fenced answer: %v", err)
	}
	for _, bad := range []string{`{"score":3}`, `{"title":"t","score":-1}`, `not json`, `{"title":1}`} {
		if _, err := s.Check(bad); !errors.Is(err, ErrNotConforming) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestNoStrictFormWhenItWouldChangeTheMeaning: a schema open to
// properties it does not name, a keyword strict mode does not take, or a
// root that is no object goes with strict off, as given.
func TestNoStrictFormWhenItWouldChangeTheMeaning(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"string","default":"x"}}}`,
		`{"type":"array","items":{"type":"string"}}`,
		`{"type":"object","properties":{"a":true}}`,
	} {
		s, err := Parse([]byte(in), "x")
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if w := s.Wire(); w.Strict || string(w.Schema) != in {
			t.Errorf("%s goes as %+v", in, w)
		}
	}
}
