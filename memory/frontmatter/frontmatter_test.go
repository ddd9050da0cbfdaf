package frontmatter

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/fixtures"
)

func TestParseClaudeAgent(t *testing.T) {
	d, err := Parse("---\nname: code-reviewer\ndescription: \"Reviews code: finds bugs\"\ntools: Read, Grep, Glob\nmodel: sonnet # cheap\n---\n\nYou review code.\n")
	if err != nil {
		t.Fatal(err)
	}
	if d.Get("name") != "code-reviewer" || d.Get("description") != "Reviews code: finds bugs" || d.Get("model") != "sonnet" {
		t.Fatalf("fields %+v", d.Fields)
	}
	if got := d.Fields["tools"].Items(); !slices.Equal(got, []string{"Read", "Grep", "Glob"}) {
		t.Fatalf("tools %q", got)
	}
	if d.Body != "You review code.\n" {
		t.Fatalf("body %q", d.Body)
	}
	if !slices.Equal(d.Keys, []string{"name", "description", "tools", "model"}) {
		t.Fatalf("keys %q", d.Keys)
	}
}

func TestParseListsAndBlocks(t *testing.T) {
	d, err := Parse("---\r\nallowed-tools: [Bash(git add:*), 'Read']\r\ntools:\r\n  - Edit\r\n  - \"Write\"\r\ndescription: >\r\n  one\r\n  two\r\nhint: |\r\n  a\r\n  b\r\n---\r\nbody")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Fields["allowed-tools"].Items(); !slices.Equal(got, []string{"Bash(git add:*)", "Read"}) {
		t.Fatalf("allowed-tools %q", got)
	}
	if got := d.Fields["tools"].Items(); !slices.Equal(got, []string{"Edit", "Write"}) {
		t.Fatalf("tools %q", got)
	}
	if h, err := Parse("---\nargument-hint: [pr-number] [priority]\n---\n"); err != nil || h.Fields["argument-hint"].Raw != "[pr-number] [priority]" {
		t.Fatalf("argument-hint %+v %v", h.Fields, err)
	}
	if d.Get("description") != "one two" || d.Get("hint") != "a\nb" || d.Body != "body" {
		t.Fatalf("doc %+v", d)
	}
}

func TestParseNoFrontMatter(t *testing.T) {
	d, err := Parse("just a prompt $ARGUMENTS")
	if err != nil || d.Body != "just a prompt $ARGUMENTS" || len(d.Fields) != 0 {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestParseMalformedIsOneError(t *testing.T) {
	for _, s := range []string{
		"---\nname: x\n",
		"---\nname x\n---\n",
		"---\n  name: x\n---\n",
		"---\nd: \"open\n---\n",
		"---\nt: [a, b\n---\n",
		"---\nd: 'open\nname: x\n---\n",
		"---\n: x\n---\n",
	} {
		if _, err := Parse(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want ErrMalformed", s, err)
		}
	}
}

// TestParseClaudeExamples: Claude Code's own documented examples are not
// valid YAML; each key YAML cannot read keeps the rest of its line as
// text, and the other keys are read as YAML.
func TestParseClaudeExamples(t *testing.T) {
	d, err := Parse("---\nallowed-tools: Bash(git add:*), Bash(git status:*)\nargument-hint: [pr-number] [priority]\ndescription: Fix: the thing\nmodel: claude-3-5-haiku-20241022\n---\nFix issue #$1 with priority $2.\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Fields["allowed-tools"].Items(); !slices.Equal(got, []string{"Bash(git add:*)", "Bash(git status:*)"}) {
		t.Errorf("allowed-tools %q", got)
	}
	if f := d.Fields["argument-hint"]; f.Text != "[pr-number] [priority]" || f.Raw != "[pr-number] [priority]" || f.IsList {
		t.Errorf("argument-hint %+v", f)
	}
	if d.Get("description") != "Fix: the thing" || d.Get("model") != "claude-3-5-haiku-20241022" {
		t.Errorf("fields %+v", d.Fields)
	}
	if d.Body != "Fix issue #$1 with priority $2.\n" || !d.Front {
		t.Errorf("body %q", d.Body)
	}
}

// TestParseYAML: what YAML has and the hand reader had not (a mapping,
// a multi-line plain scalar, numbers as written) is read as YAML.
func TestParseYAML(t *testing.T) {
	d, err := Parse("---\nname: pdf\nmetadata:\n  version: 1.2\n  author: \"team\"\ndescription: one\n  two\nnested:\n  a: [b]\n---\n")
	if err != nil {
		t.Fatal(err)
	}
	if f := d.Fields["metadata"]; !f.IsMap || f.Map["version"] != "1.2" || f.Map["author"] != "team" {
		t.Errorf("metadata %+v", f)
	}
	if d.Get("description") != "one two" {
		t.Errorf("description %q", d.Get("description"))
	}
	if !d.Fields["nested"].Nested {
		t.Errorf("nested %+v", d.Fields["nested"])
	}
}

// TestParsePublicSkills: the public SKILL.md files of claude-code-hooks
// (memory/fixtures; their descriptions hold ": ", which YAML refuses)
// read with their name and description, and their body after the block.
func TestParsePublicSkills(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures.Path(t, "claude-code-hooks"), "plugins", "*", "skills", "*", "SKILL.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no public skills in the claude-code-hooks fixture: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(string(data))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if d.Get("name") != filepath.Base(filepath.Dir(f)) || d.Get("description") == "" || d.Get("disable-model-invocation") != "true" {
			t.Errorf("%s: fields %+v", f, d.Fields)
		}
		if !strings.HasPrefix(d.Body, "# ") {
			t.Errorf("%s: body %q", f, d.Body[:min(len(d.Body), 40)])
		}
	}
}
