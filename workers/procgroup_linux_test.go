package workers

import (
	"testing"
)

// assertNoLiveMember fails if a process of group pgid is running (not a
// zombie) right now.
func assertNoLiveMember(t testing.TB, pgid int) {
	t.Helper()
	if groupHasLiveMember(pgid) {
		t.Fatalf("process group %d still has a live member after Call returned", pgid)
	}
}

func TestParseStat(t *testing.T) {
	state, pgrp, ok := parseStat([]byte("1234 (we (ird) name) S 1 987 987 0 -1 4194560"))
	if !ok || state != 'S' || pgrp != 987 {
		t.Fatalf("parseStat = %c, %d, %v", state, pgrp, ok)
	}
	if _, _, ok := parseStat([]byte("garbage")); ok {
		t.Fatal("parsed garbage")
	}
}
