package git

import "testing"

// TestParseRawReadsEachRecord: a diff of trees read record by record, a
// path with a space whole, the wanted paths alone, a short record refused.
func TestParseRawReadsEachRecord(t *testing.T) {
	out := []byte(":100644 000000 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0000000000000000000000000000000000000000 D\x00a b.txt\x00:000000 100755 0000000000000000000000000000000000000000 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 A\x00dir/x\x00")
	ch, err := parseRaw(out, nil)
	if err != nil || len(ch) != 2 || ch[0] != (rawChange{"100644", "000000", "0000000000000000000000000000000000000000", "a b.txt"}) || ch[1].dstMode != "100755" || ch[1].path != "dir/x" || ch[1].dstObject != "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" {
		t.Fatalf("%+v %v", ch, err)
	}
	if ch, _ := parseRaw(out, map[string]bool{"dir/x": true}); len(ch) != 1 || ch[0].path != "dir/x" {
		t.Fatalf("wanted: %+v", ch)
	}
	if _, err := parseRaw([]byte(":100644 000000 x\x00p\x00"), nil); err == nil {
		t.Fatal("a short record was read")
	}
}
