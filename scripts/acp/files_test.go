package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientOfferingOneFileMethod: a client offering fs/read_text_file
// alone is asked for reads and the writes go to the disk; one offering
// fs/write_text_file alone gets the writes and the reads come from the
// disk. The method not offered is never requested.
func TestClientOfferingOneFileMethod(t *testing.T) {
	t.Parallel()
	const scenario = `{"responses":[
		{"tool_calls":[{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}]},
		{"tool_calls":[{"name":"write_file","arguments":"{\"path\":\"b.txt\",\"content\":\"new\\n\"}"}]},
		{"text":"done"}]}`
	for _, tc := range []struct {
		name        string
		read, write bool
	}{{"read alone", true, false}, {"write alone", false, true}} {
		h := startOffering(t, scenario, tc.read, tc.write)
		a, b := filepath.Join(h.dir, "a.txt"), filepath.Join(h.dir, "b.txt")
		if err := os.WriteFile(a, []byte("disk text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.c.buffers[a] = "buffer text\n"
		id := h.newSession(t)
		h.prompt(t, id, "read and write")
		out := h.c.toolTexts()
		h.c.mu.Lock()
		reads, writes := h.c.reads, h.c.writes
		h.c.mu.Unlock()
		if tc.read {
			if !strings.Contains(out, "buffer text") || len(reads) != 1 || reads[0] != a {
				t.Errorf("%s: read_file's result %q, reads %v", tc.name, out, reads)
			}
		} else if !strings.Contains(out, "disk text") || len(reads) != 0 {
			t.Errorf("%s: read_file's result %q, reads %v", tc.name, out, reads)
		}
		if tc.write {
			if writes[b] != "new\n" {
				t.Errorf("%s: writes %v", tc.name, writes)
			}
		} else if len(writes) != 0 {
			t.Errorf("%s: writes %v", tc.name, writes)
		}
		// The test's editor writes the disk too, so b.txt is there
		// either way, with the text.
		if got, _ := os.ReadFile(b); string(got) != "new\n" {
			t.Errorf("%s: b.txt = %q", tc.name, got)
		}
	}
}

// A notice can carry a name the model's command chose; the log (stderr,
// which an editor may show in a terminal panel) gets it without its
// control sequences, as the other faces write notices.
func TestNoticesLoseTheirControlSequences(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	s := &Server{o: Options{Log: &log}}
	s.say("warning: n\x1b]0;PWNTITLE\x07\x1b[2Jx/ is a git repository")
	if strings.ContainsAny(log.String(), "\x1b\x07") {
		t.Fatalf("the notice kept control sequences: %q", log.String())
	}
	if !strings.Contains(log.String(), "ralph acp: warning: n") {
		t.Fatalf("the notice lost its words: %q", log.String())
	}
}
