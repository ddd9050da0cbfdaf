package frontmatter

import (
	"errors"
	"slices"
	"testing"
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
		"---\nt:\n  not an item\n---\n",
		"---\n: x\n---\n",
	} {
		if _, err := Parse(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want ErrMalformed", s, err)
		}
	}
}
