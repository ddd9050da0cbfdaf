package git

import (
	"strings"
	"testing"
)

// A blob is taken for a Git LFS pointer only when it is one: its version
// line first, an oid of 64 hex digits and a size; anything else is a
// file of its own, whose content git already checked.
func TestParsePointerTakesOnlyPointers(t *testing.T) {
	oid := strings.Repeat("ab", 32)
	for _, c := range []struct {
		blob string
		want bool
	}{
		{"version https://git-lfs/spec/v1\noid sha256:" + oid + "\nsize 12\n", true},
		{"version x\nsize 12\noid sha256:" + oid + "\n", true},
		{"version x\noid sha256:" + oid + "\n", false},
		{"version x\noid sha256:" + oid[:62] + "\nsize 12\n", false},
		{"version x\noid sha256:" + strings.Repeat("zz", 32) + "\nsize 12\n", false},
		{"version x\noid sha1:" + oid[:40] + "\nsize 12\n", false},
		{"version x\noid sha256:" + oid + "\nsize -1\n", false},
		{"hello\noid sha256:" + oid + "\nsize 12\n", false},
		{"version x\noid sha256:" + oid + "\nsize 12\n" + strings.Repeat(" ", maxPointer), false},
	} {
		p, ok := parsePointer([]byte(c.blob))
		if ok != c.want || ok && (p.oid != oid || p.size != 12) {
			t.Errorf("parsePointer(%.60q) = %+v, %v; want %v", c.blob, p, ok, c.want)
		}
	}
}
