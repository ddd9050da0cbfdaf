package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
)

// recordOf writes msgs as a messages.jsonl, each line with its seq, and
// returns its directory.
func recordOf(t *testing.T, fs afero.Fs, msgs []conversation.Message) string {
	t.Helper()
	var b bytes.Buffer
	for i, m := range msgs {
		line, err := json.Marshal(seqLine{Message: m, Seq: i + 1})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	dir := fmt.Sprintf("/s/%d", rand.Int())
	if err := afero.WriteFile(fs, filepath.Join(dir, "messages.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// randomConversation is a conversation of n lines as ralph writes them:
// a system prompt, then prompts, answers, tool calls and results,
// refusal marks, compaction marks keeping a few messages, and now and
// then a system message or a word "system" in a message's text.
func randomConversation(r *rand.Rand, n int) []conversation.Message {
	msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: "You are ralph."}}
	for len(msgs) < n {
		switch k := r.IntN(20); {
		case k < 6:
			msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf("prompt %d", len(msgs))})
		case k < 11:
			msgs = append(msgs, conversation.Message{Role: conversation.RoleAssistant, Content: fmt.Sprintf("answer %d \u001b[1m", len(msgs))})
		case k < 14:
			id := fmt.Sprintf("c%d", len(msgs))
			msgs = append(msgs, conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a"}`}}},
				conversation.Message{Role: conversation.RoleTool, ToolCallID: id, Name: "read_file", Content: "the system is up\n"})
		case k < 16:
			msgs = append(msgs, conversation.RefusalMark("too long"))
		case k < 19:
			msgs = append(msgs, conversation.CompactionMark("summary "+strings.Repeat("s", r.IntN(3)), conversation.Compaction{Kept: r.IntN(6) - 1, Cause: conversation.CompactedByCommand}))
		default:
			if r.IntN(4) == 0 {
				msgs = append(msgs, conversation.Message{Role: conversation.RoleSystem, Content: "a system note"})
			} else {
				msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "user says \"role\":\"system\""})
			}
		}
	}
	return msgs
}

// TestResumeWindowReadsWhatAWholeReadReads: the conversation a resume
// reads from the window of its record is the one every line gives, with
// the same count of lines, for records of every shape.
func TestResumeWindowReadsWhatAWholeReadReads(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	r := rand.New(rand.NewPCG(94, 1))
	windowed := 0
	for round := 0; round < 400; round++ {
		msgs := randomConversation(r, 1+r.IntN(40))
		dir := recordOf(t, fs, msgs)
		whole, wn, whole0, err := loadMessages(fs, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		got, gn, hole, err := loadMessages(fs, dir, true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, whole) || gn != wn || hole != nil || whole0 != nil {
			t.Fatalf("round %d: the window read\n%+v (%d lines, hole %v)\nwhere every line gives\n%+v (%d lines, hole %v)", round, got, gn, hole, whole, wn, whole0)
		}
		lines, _, _ := readLines(fs, filepath.Join(dir, "messages.jsonl"))
		if windowOf(lines) != nil {
			windowed++
		}
	}
	if windowed < 100 {
		t.Errorf("only %d of 400 records were read by their window", windowed)
	}
}

// TestResumeSkipsWhatACompactionReplaced: a resume does not read the
// lines a compaction replaced (a line there that no longer decodes is
// not looked at), while LoadMessages, which people's views and handoffs
// read, reads every line and reports it.
func TestResumeSkipsWhatACompactionReplaced(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: "sys"}}
	for i := 0; i < 50; i++ {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "q"}, conversation.Message{Role: conversation.RoleAssistant, Content: "a"})
	}
	msgs = append(msgs, conversation.CompactionMark("the summary", conversation.Compaction{Kept: 2}), conversation.Message{Role: conversation.RoleUser, Content: "next"})
	dir := recordOf(t, fs, msgs)
	path := filepath.Join(dir, "messages.jsonl")
	data, _ := afero.ReadFile(fs, path)
	// Line 10 is damaged.
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[9] = []byte("{not json\n")
	if err := afero.WriteFile(fs, path, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	got, n, _, err := loadMessages(fs, dir, true)
	if err != nil {
		t.Fatalf("the resume read a line the compaction replaced: %v", err)
	}
	want := []conversation.Message{msgs[0], {Role: conversation.RoleUser, Content: "the summary"}, {Role: conversation.RoleAssistant, Content: conversation.SummaryAck},
		msgs[99], msgs[100], msgs[102]}
	if !reflect.DeepEqual(got, want) || n != len(msgs) {
		t.Errorf("the resume read %+v (%d lines), want %+v (%d lines)", got, n, want, len(msgs))
	}
	if _, err := LoadMessages(fs, dir); err == nil || !strings.Contains(err.Error(), "line 10 is malformed") {
		t.Errorf("LoadMessages did not report the damaged line: %v", err)
	}
}
