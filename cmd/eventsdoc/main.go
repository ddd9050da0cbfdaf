// Command eventsdoc writes docs/events.md, the JSON event contract, from
// the Go types ralph marshals its JSON lines from: a table per kind of
// line (each field's JSON type and, from the field's comment, its
// meaning) and a JSON Schema the end-to-end tests validate ralph's output
// against. Run it through go generate in scripts/cli, or as
//
//	go run ./cmd/eventsdoc -o docs/events.md
//
// from the module's root.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("o", "", "the `file` to write (standard output when empty)")
	flag.Parse()
	root, err := moduleRoot()
	if err == nil {
		var doc []byte
		if doc, err = Generate(root); err == nil {
			err = write(*out, doc)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eventsdoc:", err)
		os.Exit(1)
	}
}

// write writes doc to path, or to standard output when path is empty.
func write(path string, doc []byte) error {
	if path == "" {
		_, err := os.Stdout.Write(doc)
		return err
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		return fmt.Errorf("write the contract: %w", err)
	}
	return nil
}

// moduleRoot is the directory of the go.mod above the working directory:
// the field comments are read from the sources beneath it.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}
