package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// docsPath is docs/events.md from this package's directory.
var docsPath = filepath.Join("..", "..", "docs", "events.md")

// TestEventsDocIsCurrent fails when docs/events.md is not what the types
// make of it: a field added, renamed or re-commented without running go
// generate ./scripts.
func TestEventsDocIsCurrent(t *testing.T) {
	want, err := Generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/events.md is stale: run go generate ./scripts (or go run ./cmd/eventsdoc -o docs/events.md)")
	}
}

// The schema the page publishes is one a validator takes.
func TestEventsSchemaResolves(t *testing.T) {
	doc, err := Generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	block, err := schemaBlock(doc)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(block, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	line := map[string]any{"type": "tool_result", "schema_version": 1.0, "tool_name": "read_file", "output": "x", "is_error": false}
	if err := rs.Validate(line); err != nil {
		t.Fatalf("a tool_result line does not validate: %v", err)
	}
	line["schema_version"] = 2.0
	if rs.Validate(line) == nil {
		t.Fatal("a line of another schema_version validates")
	}
	if rs.Validate(map[string]any{"type": "init", "schema_version": 1.0}) == nil {
		t.Fatal("an init line without its session id validates")
	}
}

// schemaBlock is the JSON Schema of a generated page.
func schemaBlock(doc []byte) ([]byte, error) {
	_, rest, ok := bytes.Cut(doc, []byte("## JSON Schema\n\n```json\n"))
	block, _, ok2 := bytes.Cut(rest, []byte("\n```"))
	if !ok || !ok2 {
		return nil, errors.New("no JSON Schema block")
	}
	return block, nil
}
