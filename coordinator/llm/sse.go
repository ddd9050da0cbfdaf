package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// readEvents reads a server-sent event stream, as the Messages and the
// Responses wires both stream their answers: it hands each event's data
// to handle until handle fails, done says the answer is whole, or the
// stream ends. Its error is the reader's or handle's.
func readEvents(r io.Reader, handle func(data []byte) error, done func() bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
			if herr := handle(bytes.TrimSpace(data)); herr != nil {
				return herr
			}
			if done() {
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
