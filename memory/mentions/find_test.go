package mentions

import (
	"slices"
	"testing"
)

func TestMentionsSkipCodeAndEmails(t *testing.T) {
	in := "See @README.md and @docs/a.md.\nMail me@example.com, ping @~/notes.md\n" +
		"`@inspan.md` is code, and so is\n```sh\n@fenced.md\n```\n~~~\n@tilde.md\n~~~\n@after.md @README.md"
	got := Find(in)
	want := []string{"README.md", "docs/a.md", "~/notes.md", "after.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("Find = %q, want %q", got, want)
	}
}
