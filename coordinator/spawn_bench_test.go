package coordinator

import (
	"context"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
)

// sessionAgentStore records a child into its session, as project does.
type sessionAgentStore struct {
	s  *memory.Session
	id string
}

func (a sessionAgentStore) AppendMessages(msgs ...conversation.Message) error {
	return a.s.AppendAgentMessages(a.id, msgs...)
}
func (a sessionAgentStore) AppendLog(name string, v any) error  { return a.s.AppendLog(name, v) }
func (a sessionAgentStore) SaveState(func(*memory.State)) error { return nil }

// BenchmarkSpawn64 runs one coordinator turn that spawns 64 children, each
// answering at once, in-process: the cost of starting and finishing
// children, without and with the session record on the real filesystem
// (for profiling: go test -bench Spawn64 -cpuprofile).
func BenchmarkSpawn64(b *testing.B) {
	for _, recorded := range []bool{false, true} {
		name := map[bool]string{false: "unrecorded", true: "recorded"}[recorded]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f := newFamilyB(b, 64, familyModel(64, 0))
				if recorded {
					s, err := memory.CreateSession(afero.NewOsFs(), b.TempDir(), "s", memory.State{Status: memory.StatusRunning})
					if err != nil {
						b.Fatal(err)
					}
					f.coord.opts.Store = s
					f.coord.opts.Children.Store = func(id string) Store { return sessionAgentStore{s, id} }
					stop := StartRecording(context.Background(), f.coord.Events(), s, testTranscript).Stop
					b.Cleanup(func() { _ = stop() })
				}
				b.StartTimer()
				if res := f.coord.Run(context.Background(), "go"); res.Text != "all reported" {
					b.Fatalf("result = %+v", res)
				}
			}
		})
	}
}
