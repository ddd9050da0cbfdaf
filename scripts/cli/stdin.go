package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxStdin bounds how much piped input is read as context.
const MaxStdin = 8 << 20

// ReadPipedStdin returns what is piped into f when f is a pipe or a regular
// file. A terminal, /dev/null or other device is never read, so ralph never
// blocks waiting on an inherited terminal.
func ReadPipedStdin(f *os.File) (string, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", false, nil
	}
	mode := fi.Mode()
	if mode&os.ModeNamedPipe == 0 && !mode.IsRegular() && mode&os.ModeSocket == 0 {
		return "", false, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxStdin+1))
	if err != nil {
		return "", false, fmt.Errorf("read standard input: %w", err)
	}
	if len(data) > MaxStdin {
		return "", false, fmt.Errorf("standard input is larger than %d MiB; pass a file path in the task instead", MaxStdin>>20)
	}
	return string(data), true, nil
}

// BuildPrompt combines the task and piped input. Piped input alone is the
// task; with a task it is context placed before the task.
func BuildPrompt(task, stdin string) string {
	task = strings.TrimSpace(task)
	if strings.TrimSpace(stdin) == "" {
		return task
	}
	if task == "" {
		return strings.TrimSpace(stdin)
	}
	return "Context from standard input:\n\n```\n" + strings.TrimRight(stdin, "\n") + "\n```\n\n" + task
}
