package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// issueNamed is a word run on into a number as one part of a file's name
// (attack59_, ecosystem2_, secrets3): the issue or round a file was
// written for, which tells a reader nothing of what it tests.
var issueNamed = regexp.MustCompile(`^[a-z]+[0-9]+[a-z]?$`)

// TestFilesAreNamedByFace: every file of the end-to-end tests is named by
// the face or topic it tests (doc.go), never by the issue it came from,
// so that a reader finds a test by what it is about and `make e2e
// GROUP=attack` (which selects by prefix) selects every attack test.
func TestFilesAreNamedByFace(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".go"), "_test")
		for _, part := range strings.Split(name, "_") {
			if issueNamed.MatchString(part) {
				t.Errorf("%s is named by an issue number (%q): name it by its face or topic (e2e/doc.go), as attack_escapes_test.go is", e.Name(), part)
			}
		}
	}
}
