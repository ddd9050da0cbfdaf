package git

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestReadLogFileIsReadAsAStream: a checkpoint log of 32 MB, most of it
// lines that are no entry (a turn's long note, a damaged line), is read
// a line at a time: what the read allocates (its entries, a line's
// buffer, each line's decoding) is under an eighth of the log, where it
// was read whole (issue 89, a
// minor item).
//
// It does not call t.Parallel: the allocations are counted for the whole
// process, which other tests would add to.
// Not parallel: it counts the process's allocations, which tests running beside it would add to.
func TestReadLogFileIsReadAsAStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "checkpoints.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	filler := `{"note":"` + strings.Repeat("n", 4000) + `"}` + "\n"
	entry, _ := json.Marshal(Entry{Kind: KindTurn, Turn: 1, Checkpoint: Checkpoint{Commit: strings.Repeat("a", 40)}})
	var size int64
	for i := 0; size < 32<<20; i++ {
		line := filler
		if i%250 == 0 {
			line = string(entry) + "\n"
		}
		n, err := f.WriteString(line)
		if err != nil {
			t.Fatal(err)
		}
		size += int64(n)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	log := ReadLogFile(afero.NewOsFs(), path)
	runtime.ReadMemStats(&after)
	if len(log) < 30 || log[0].Commit != strings.Repeat("a", 40) {
		t.Fatalf("read %d entries, first %+v", len(log), log[0])
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("reading a log of %d MB allocated %d KB", size>>20, allocated>>10)
	if limit := uint64(size / 8); allocated > limit {
		t.Errorf("reading the log allocated %d KB, more than an eighth of it (%d KB)", allocated>>10, limit>>10)
	}
	if got := ParseLog(bytes.Repeat(append(entry, '\n'), 3)); len(got) != 3 {
		t.Errorf("ParseLog read %d entries, want 3", len(got))
	}
}
