package view

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// BenchmarkReplay10000 reopens a session of 10,000 events (about 1,400
// turns) at 100×30: reading events.jsonl and laying out the two screens
// shown. Reopening must not keep the person waiting on a long session.
func BenchmarkReplay10000(b *testing.B) {
	fs := afero.NewMemMapFs()
	root, id := "/p", "20261125T000000Z-0123456789ab"
	var buf []byte
	for n, i := 0, 0; n < 10000; i++ {
		for _, ev := range run(fmt.Sprintf("question %d about the parser", i), fmt.Sprintf("answer %d: the parser reads **tokens** one at a time.\n\n- first\n- second", i), false) {
			line, err := json.Marshal(ev)
			if err != nil {
				b.Fatal(err)
			}
			buf = append(append(buf, line...), '\n')
			n++
		}
	}
	path := memory.LogPath(root, id, memory.EventsLog)
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := afero.WriteFile(fs, path, buf, 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if out := Replay(fs, root, id, ReplayTerm{Width: 100, Height: 30, Color: true}); out == "" {
			b.Fatal("nothing replayed")
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/replay")
}
