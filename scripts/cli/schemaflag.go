package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/ralph-dev/ralph/coordinator/schema"
)

// Flag names of structured output: codex exec's --output-schema FILE and
// claude -p's --json-schema JSON, the same schema given two ways.
const (
	outputSchemaFlag = "output-schema"
	jsonSchemaFlag   = "json-schema"
)

// outputSchema is the schema --output-schema or --json-schema gives, nil
// when neither does. It is read and compiled before anything is sent to
// the model; what is wrong with it is one sentence, which the one-shot
// reports with exit 2.
func (f flags) outputSchema() (*schema.Schema, error) {
	switch {
	case f.outputSchemaFile != "" && f.jsonSchema != "":
		return nil, fmt.Errorf("--%s and --%s both give the output schema; give one", outputSchemaFlag, jsonSchemaFlag)
	case f.jsonSchema != "":
		s, err := schema.Parse([]byte(f.jsonSchema), "--"+jsonSchemaFlag)
		if err != nil {
			return nil, err
		}
		return s, nil
	case f.outputSchemaFile != "":
		data, err := readSchemaFile(f.outputSchemaFile)
		if err != nil {
			return nil, fmt.Errorf("--%s: cannot read %s: %s", outputSchemaFlag, f.outputSchemaFile, pathProblem(err))
		}
		s, err := schema.Parse(data, "--"+outputSchemaFlag+" "+f.outputSchemaFile)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, nil
}

// readSchemaFile reads the file --output-schema names: a file the person
// names on the command line, as codex exec reads it, no project path.
func readSchemaFile(path string) ([]byte, error) {
	return os.ReadFile(path)
}

// pathProblem is why a file could not be read, without Go's "open NAME:".
func pathProblem(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// writeStructured writes a structured answer: the JSON as it is for a
// script, indented in a code block for a person at a terminal.
func (o *OneShot) writeStructured(value json.RawMessage) {
	if o.StdoutTTY {
		var pretty bytes.Buffer
		if json.Indent(&pretty, value, "", "  ") == nil {
			o.writeAnswer("```json\n" + pretty.String() + "\n```")
			return
		}
	}
	_, _ = o.Stdout.Write(append(append([]byte(nil), value...), '\n'))
}
