package view

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/event"
)

// ReplayEvents hands fn each complete line of events.jsonl from byte from
// up to byte to (-1: its end) and returns where it stopped: a line being
// appended is left for the next read.
func ReplayEvents(fs afero.Fs, path string, from, to int64, fn func(event.Event)) (int64, error) {
	if to == 0 || to >= 0 && to <= from {
		return from, nil
	}
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return from, fmt.Errorf("read %s: %w", path, err)
	}
	var rd io.Reader = f
	if to > 0 {
		rd = io.LimitReader(f, to-from)
	}
	br := bufio.NewReaderSize(rd, 64<<10)
	off := from
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil
			}
			return off, fmt.Errorf("read %s: %w", path, err)
		}
		off += int64(len(line))
		var ev event.Event
		if json.Unmarshal(line, &ev) != nil {
			continue // a damaged line; ralph logs shows it as such
		}
		fn(ev)
	}
}
