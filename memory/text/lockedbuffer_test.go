package text

import "testing"

func TestLockedBufferLimitKeepsTheStartAndAcceptsAll(t *testing.T) {
	b := LockedBuffer{Limit: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := b.String(); got != "abcde" {
		t.Fatalf("String = %q, want abcde", got)
	}
	var all LockedBuffer
	_, _ = all.Write([]byte("no limit"))
	if all.String() != "no limit" {
		t.Fatalf("zero value kept %q", all.String())
	}
}
