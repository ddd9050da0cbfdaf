package applypatch

import (
	"strings"
	"testing"
)

func TestParseLenient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, patch string
		hunks       int
		err         string
	}{
		{"heredoc", "<<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n", 1, ""},
		{"crlf", "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n", 1, ""},
		{"no @@ in the first chunk", "*** Begin Patch\n*** Update File: a\n import foo\n+bar\n*** End Patch", 1, ""},
		{"no begin", "*** Add File: a\n+x\n*** End Patch", 0, "first line of the patch"},
		{"no end", "*** Begin Patch\n*** Add File: a\n+x", 0, "last line of the patch"},
		{"second chunk without @@", "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\nz\n*** End Patch", 0, "Expected update hunk to start with a @@"},
		{"empty", "*** Begin Patch\n*** End Patch", 0, ""},
	} {
		hunks, err := Parse(tc.patch)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case len(hunks) != tc.hunks:
			t.Errorf("%s: %d hunks, want %d", tc.name, len(hunks), tc.hunks)
		}
	}
}

func TestUpdated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, patch, want, err string
	}{
		{"context anchor", "class A\n  x = 1\nclass B\n  x = 1\n", "@@ class B\n-  x = 1\n+  x = 2", "class A\n  x = 1\nclass B\n  x = 2\n", ""},
		{"trailing whitespace ignored", "a  \nb\n", "@@\n-a\n+c", "c\nb\n", ""},
		{"unicode dash and quotes", "say \u201chi\u201d \u2014 now\n", "@@\n-say \"hi\" - now\n+bye", "bye\n", ""},
		{"unified-diff header is text", "a\nb\n", "@@ -1,2 +1,2 @@\n-a\n+c", "", "Failed to find context"},
		{"end of file", "x\ny\nx\n", "@@\n-x\n+z\n*** End of File", "x\ny\nz\n", ""},
		{"missing lines", "a\n", "@@\n-nope\n+c", "", "Failed to find expected lines"},
	} {
		hunks, err := Parse("*** Begin Patch\n*** Update File: f\n" + tc.patch + "\n*** End Patch")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := Updated("f", tc.file, hunks[0].Chunks)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	got := Paths("*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n*** Move to: c\n@@\n-x\n+y\n*** Delete File: a\n*** End Patch")
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("Paths = %v, want a, b, c", got)
	}
}
