package project

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory"
)

// syncCountingFs is the OS filesystem with every fsync counted: of files
// and of directories, which are synced through the same File.Sync.
type syncCountingFs struct {
	afero.Fs
	syncs atomic.Int64
}

func (c *syncCountingFs) Open(name string) (afero.File, error) {
	f, err := c.Fs.Open(name)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, fs: c}, nil
}

func (c *syncCountingFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f, err := c.Fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, fs: c}, nil
}

func (c *syncCountingFs) Create(name string) (afero.File, error) {
	return c.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

type countedFile struct {
	afero.File
	fs *syncCountingFs
}

func (f *countedFile) Sync() error {
	f.fs.syncs.Add(1)
	return f.File.Sync()
}

// Fd keeps the file a kernel file to the lock, which flocks it.
func (f *countedFile) Fd() uintptr { return f.File.(interface{ Fd() uintptr }).Fd() }

// oneShotSyncs opens the project in dir on a counting filesystem, runs one
// prompt to its end as `ralph "prompt"` does, closes the project and
// returns how many fsyncs all of it made.
func oneShotSyncs(t *testing.T, dir, url, prompt string) int64 {
	t.Helper()
	fs := &syncCountingFs{Fs: afero.NewOsFs()}
	getenv := env(t)
	// The person's state key is made once on a machine, not per run.
	if _, err := memory.StateKey(afero.NewOsFs(), filepath.Join(getenv("XDG_CONFIG_HOME"), "ralph")); err != nil {
		t.Fatal(err)
	}
	p, err := Open(context.Background(), Options{Dir: dir, Fs: fs, Mode: ModeOneShot, Yes: true,
		Getenv: func(k string) string {
			if k == "OPENAI_BASE_URL" {
				return url
			}
			return getenv(k)
		}})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Coordinator(nil, nil).Run(context.Background(), prompt)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s: %v", prompt, res.Err)
	}
	return fs.syncs.Load()
}

// TestOneShotFsyncs: a one-shot that answers at once makes at most seven
// fsyncs in all (the session's start record, four: its session.json, its
// first prompt, its directory and the directory's name; its end, three),
// and each turn that ran tools three more (the messages, the session's
// own session.json and its directory). The lock, the registry, the
// summary .ralph/session.json and the event logs add none. It used to be
// 29, and 5 a turn; the first prompt's fsync came with issue 67, so that
// a session never counts as one without its prompt. (A tool that writes
// a person's file makes it durable: those fsyncs are the tool's, not the
// session's, and the tools here only read.)
func TestOneShotFsyncs(t *testing.T) {
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if !strings.Contains(msgs[1].Content, "look around") {
			return llmtest.Response{Text: "hi"}
		}
		switch len(msgs) {
		case 2:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "list_files", Arguments: `{}`}}}
		case 4:
			return llmtest.Response{ToolCalls: []llmtest.ToolCall{{Name: "search", Arguments: `{"pattern":"alpha"}`}}}
		}
		return llmtest.Response{Text: "all done"}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	// The first run in a project creates .ralph/ and makes its
	// .gitignore durable; every run after it pays only for its session.
	first := oneShotSyncs(t, dir, srv.URL, "say hi")
	sayHi := oneShotSyncs(t, dir, srv.URL, "say hi")
	threeTurns := oneShotSyncs(t, dir, srv.URL, "look around: list the files, then search them")
	t.Logf("fsyncs: say hi %d (first in the project %d), three turns with tools %d", sayHi, first, threeTurns)
	if sayHi > 7 {
		t.Errorf("a one-shot made %d fsyncs, want at most 7", sayHi)
	}
	if first > sayHi+2 {
		t.Errorf("the first one-shot in a project made %d fsyncs, want at most %d", first, sayHi+2)
	}
	if perTurn := float64(threeTurns-sayHi) / 2; perTurn > 3 {
		t.Errorf("each turn with tools cost %.1f fsyncs, want at most 3", perTurn)
	}
	st, err := memory.LoadState(afero.NewOsFs(), dir)
	if err != nil || st.Status != memory.StatusCompleted || st.Turns != 3 {
		t.Errorf("the last session's summary: %+v %v", st, err)
	}
}
