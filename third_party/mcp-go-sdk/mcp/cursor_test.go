// PATCH (ralph): a test of cursor.go.

package mcp

import (
	"bytes"
	"encoding/gob"
	"strings"
	"testing"
)

// TestCursorBytesAreGobs: the cursor's bytes are encoding/gob's own.
func TestCursorBytesAreGobs(t *testing.T) {
	for _, s := range []string{"", "a", "abc", strings.Repeat("x", 127), strings.Repeat("y", 128), strings.Repeat("z", 300), "héllo\x00"} {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(pageToken{LastUID: s}); err != nil {
			t.Fatal(err)
		}
		got := gobEncodePageToken(pageToken{LastUID: s})
		if !bytes.Equal(got, buf.Bytes()) {
			t.Fatalf("%d bytes: got %x want %x", len(s), got, buf.Bytes())
		}
		back, err := gobDecodePageToken(buf.Bytes())
		if err != nil || back.LastUID != s {
			t.Fatalf("decode %d bytes: %v %q", len(s), err, back.LastUID[:min(10, len(back.LastUID))])
		}
		var viaGob pageToken
		if err := gob.NewDecoder(bytes.NewReader(got)).Decode(&viaGob); err != nil || viaGob.LastUID != s {
			t.Fatalf("gob decode: %v", err)
		}
		for cut := 0; cut < len(got); cut++ {
			if _, err := gobDecodePageToken(got[:cut]); err == nil {
				t.Fatalf("a cursor cut at %d of %d was read", cut, len(got))
			}
		}
		if _, err := gobDecodePageToken(append(append([]byte(nil), got...), 0)); err == nil {
			t.Fatal("a cursor with a byte more was read")
		}
	}
}
