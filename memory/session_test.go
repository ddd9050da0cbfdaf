package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/memorytest"
	"github.com/spf13/afero"
)

const root = "/proj"

// newSession creates a session under root on fs.
func newSession(tb testing.TB, fs afero.Fs, root string, secrets ...string) *Session {
	tb.Helper()
	s, err := CreateSession(fs, root, "20250301T120000Z-abcdef", State{
		Status: StatusRunning, Mode: "oneshot", Model: "gpt-test", StartedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
	}, secrets...)
	if err != nil {
		tb.Fatalf("CreateSession: %v", err)
	}
	return s
}

// sampleConversation is a realistic exchange covering every message field.
func sampleConversation() []conversation.Message {
	return []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are ralph."},
		{Role: conversation.RoleUser, Content: "Fix the <build> & \"tests\"\nplease ✓"},
		{Role: conversation.RoleAssistant, Content: "Looking.", ToolCalls: []conversation.ToolCall{
			{ID: "call_1", Name: "read_file", Arguments: `{"path":"go.mod"}`},
			{ID: "call_2", Name: "run_command", Arguments: `{"command":"go test ./..."`}, // invalid JSON is kept as is
		}},
		{Role: conversation.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "module x\n"},
		{Role: conversation.RoleTool, ToolCallID: "call_2", Content: ""},
		{Role: conversation.RoleAssistant, Content: "Done."},
	}
}

func TestSessionRoundTrip(t *testing.T) {
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root)
	msgs := sampleConversation()
	// Appended in several calls, as the coordinator does turn by turn.
	if err := s.AppendMessages(msgs[:2]...); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessages(); err != nil { // nothing to append is fine
		t.Fatal(err)
	}
	if err := s.AppendMessages(msgs[2:]...); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(func(st *State) { st.Iteration = 3; st.Turns = 2 }); err != nil {
		t.Fatal(err)
	}
	got, err := LoadMessages(fs, s.Dir)
	if err != nil {
		t.Fatalf("LoadMessages: %v", err)
	}
	if !reflect.DeepEqual(got, msgs) {
		t.Errorf("loaded\n%+v\nwant\n%+v", got, msgs)
	}
	if want := filepath.Join(root, SessionsDir, s.ID); s.Dir != want {
		t.Errorf("Dir = %q, want %q", s.Dir, want)
	}
}

func TestLoadMessagesNoFile(t *testing.T) {
	msgs, err := LoadMessages(afero.NewMemMapFs(), "/nowhere")
	if err != nil || msgs != nil {
		t.Errorf("LoadMessages of a missing file = %v, %v; want nil, nil", msgs, err)
	}
}

// writeMessages writes raw messages.jsonl content into dir.
func writeMessages(t testing.TB, fs afero.Fs, dir, content string) {
	t.Helper()
	if err := afero.WriteFile(fs, filepath.Join(dir, "messages.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMessagesDamage(t *testing.T) {
	const good = `{"role":"user","content":"one"}` + "\n" + `{"role":"assistant","content":"two"}` + "\n"
	tests := []struct {
		name    string
		content string
		want    int    // messages loaded when no error
		wantErr string // fragment of the error, "" for none
	}{
		{"intact", good, 2, ""},
		{"no final newline", strings.TrimSuffix(good, "\n"), 2, ""},
		{"torn last line", good + `{"role":"assistant","content":"thr`, 2, ""},
		{"torn inside an escape", good + `{"role":"tool","content":"a\u00`, 2, ""},
		{"only a torn line", `{"role":"us`, 0, ""},
		{"malformed middle line", `{"role":"user","content":"one"}` + "\n" + `{"role":` + "\n" + `{"role":"assistant"}` + "\n", 0, "line 2 is malformed"},
		{"malformed first line", "garbage\n" + good, 0, "line 1 is malformed"},
		// A complete (newline-terminated) last line cannot be torn by a
		// crashed append, so it is damage and must not be skipped silently.
		{"malformed complete last line", good + "{\"role\":\n", 0, "line 3 is malformed"},
		{"torn line of NULs", good + "\x00\x00\x00", 2, ""},
		{"blank middle line", `{"role":"user"}` + "\n\n" + `{"role":"assistant"}` + "\n", 0, "line 2 is malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			writeMessages(t, fs, "/s", tt.content)
			msgs, err := LoadMessages(fs, "/s")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "/s/messages.jsonl") {
					t.Fatalf("err = %v, want one naming /s/messages.jsonl and %q", err, tt.wantErr)
				}
				if msgs != nil {
					t.Errorf("partial history returned with the error: %+v", msgs)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadMessages: %v", err)
			}
			if len(msgs) != tt.want {
				t.Errorf("loaded %d messages, want %d: %+v", len(msgs), tt.want, msgs)
			}
		})
	}
}

// sessionFiles are every file a session writes, for redaction checks.
func sessionFiles(s *Session) []string {
	return []string{
		filepath.Join(s.Dir, "messages.jsonl"),
		filepath.Join(s.Dir, "events.jsonl"),
		filepath.Join(s.Dir, "transcript.md"),
		filepath.Join(s.Dir, "session.json"),
		filepath.Join(s.Root, SessionFile),
	}
}

// jsonStrings collects every string (keys too) in the JSON value(s) of
// data, one value per line for .jsonl, so a secret hidden by JSON escaping
// is found as a reader decoding the file would find it.
func jsonStrings(t *testing.T, path string, data []byte) []string {
	t.Helper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("%s is not valid JSON: %v", path, err)
			}
			return out
		}
		walk(v)
	}
}

// writeEverything writes secret into every kind of record a session keeps.
func writeEverything(t *testing.T, s *Session, secret string) {
	t.Helper()
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "my key is " + secret},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "run_command",
			Arguments: `{"command":"curl -H 'Authorization: Bearer ` + secret + `'"}`}}},
		{Role: conversation.RoleTool, ToolCallID: "c1", Content: "echo: " + secret + secret},
	}
	if err := s.AppendMessages(msgs...); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(map[string]any{"type": "tool_result", "output": "KEY=" + secret, secret: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTranscript("## Tool\n\n```\n" + secret + "\n```\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(func(st *State) { st.Status = StatusFailed; st.Error = "HTTP 401 for key " + secret }); err != nil {
		t.Fatal(err)
	}
}

func TestSessionRedactsSecrets(t *testing.T) {
	secrets := []string{
		"sk-proj-AbCdEf0123456789",
		// Characters JSON escapes: a naive replace on the encoded bytes
		// would miss these, and the decoded file would hold the secret.
		`pa"ss\word<&>1234`,
		"tab\tnewline\nkey-0001",
	}
	for _, secret := range secrets {
		t.Run(fmt.Sprintf("%q", secret), func(t *testing.T) {
			fs := afero.NewMemMapFs()
			s := newSession(t, fs, root, "short", secret)
			writeEverything(t, s, secret)
			for _, path := range sessionFiles(s) {
				data := []byte(readString(t, fs, path))
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("%s contains the secret:\n%s", path, data)
				}
				if !bytes.Contains(data, []byte("[REDACTED]")) {
					t.Errorf("%s has no [REDACTED] marker; was the secret written at all?\n%s", path, data)
				}
				if strings.HasSuffix(path, ".md") {
					continue
				}
				for _, s := range jsonStrings(t, path, data) {
					if strings.Contains(s, secret) {
						t.Errorf("%s holds the secret once decoded: %q", path, s)
					}
				}
			}
			// Redaction must not break the conversation's structure.
			msgs, err := LoadMessages(fs, s.Dir)
			if err != nil || len(msgs) != 3 || msgs[2].Content != "echo: [REDACTED][REDACTED]" {
				t.Errorf("LoadMessages after redaction = %+v, %v", msgs, err)
			}
		})
	}
}

// A secret that extends another must be redacted whole, whichever order the
// caller passes them in.
func TestSessionRedactsOverlappingSecrets(t *testing.T) {
	short, long := "sk-abcdefgh", "sk-abcdefgh-and-the-rest-9876"
	for _, order := range [][]string{{short, long}, {long, short}} {
		fs := afero.NewMemMapFs()
		s := newSession(t, fs, root, order...)
		if err := s.AppendTranscript("key: " + long + "\n"); err != nil {
			t.Fatal(err)
		}
		got := readString(t, fs, filepath.Join(s.Dir, "transcript.md"))
		if got != "key: [REDACTED]\n" {
			t.Errorf("secrets %q: transcript = %q, want the long secret fully redacted", order, got)
		}
	}
}

func TestSessionShortSecretsNotRedacted(t *testing.T) {
	// Seven characters could be an ordinary word; redacting it would mangle
	// the conversation, so only strings of 8 or more count as secrets.
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root, "abc1234", "", "12345678")
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "abc1234 and 12345678"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := LoadMessages(fs, s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].Content; got != "abc1234 and [REDACTED]" {
		t.Errorf("content = %q, want the 7-character secret kept and the 8-character one redacted", got)
	}
}

func TestSaveStateWritesBothCopies(t *testing.T) {
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root)
	before := time.Now().UTC()
	ended := time.Date(2025, 3, 1, 13, 0, 0, 0, time.UTC)
	err := s.SaveState(func(st *State) {
		st.Status = StatusCompleted
		st.Iteration, st.Turns = 4, 9
		st.Usage = conversation.Usage{InputTokens: 100, OutputTokens: 20}
		st.EndedAt = ended
	})
	if err != nil {
		t.Fatal(err)
	}
	a := readString(t, fs, filepath.Join(s.Dir, "session.json"))
	b := readString(t, fs, filepath.Join(root, SessionFile))
	if a != b {
		t.Fatalf("the two copies differ:\n%s\n---\n%s", a, b)
	}
	var st State
	if err := json.Unmarshal([]byte(a), &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != 1 || st.SessionID != s.ID || st.Status != StatusCompleted || st.Mode != "oneshot" ||
		st.Iteration != 4 || st.Turns != 9 || st.Usage.OutputTokens != 20 || !st.EndedAt.Equal(ended) {
		t.Errorf("saved state = %+v", st)
	}
	if st.UpdatedAt.Before(before.Truncate(time.Second)) {
		t.Errorf("UpdatedAt = %v, want the save time (after %v)", st.UpdatedAt, before)
	}
	if !reflect.DeepEqual(st, s.State()) {
		t.Errorf("State() = %+v differs from the file %+v", s.State(), st)
	}
	// No change function still refreshes UpdatedAt and writes.
	if err := s.SaveState(nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readString(t, fs, filepath.Join(root, SessionFile)), `"status": "completed"`) {
		t.Errorf("SaveState(nil) lost the status")
	}
	// An unset EndedAt is omitted rather than written as year 1.
	s2 := newSession(t, afero.NewMemMapFs(), root)
	if err := s2.SaveState(nil); err != nil {
		t.Fatal(err)
	}
	if st := s2.State(); !st.EndedAt.IsZero() {
		t.Errorf("EndedAt = %v", st.EndedAt)
	}
}

func TestSaveStateFailureNamesFile(t *testing.T) {
	fs := &memorytest.FailFs{Fs: afero.NewMemMapFs()}
	s := newSession(t, fs, root)
	fs.WriteErr = errors.New("no space left on device")
	err := s.SaveState(nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(s.Dir, "session.json")) {
		t.Errorf("err = %v, want one naming session.json", err)
	}
}

func TestSessionConcurrentAppends(t *testing.T) {
	// The coordinator and face may record from different goroutines; every
	// line must come out whole.
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root)
	var wg sync.WaitGroup
	const goroutines, each = 4, 50
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				m := conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf("g%d-%d %s", g, i, strings.Repeat("x", 500))}
				if err := s.AppendMessages(m); err != nil {
					t.Error(err)
				}
				if err := s.AppendEvent(map[string]int{"g": g, "i": i}); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					if err := s.SaveState(func(st *State) { st.Iteration++ }); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	msgs, err := LoadMessages(fs, s.Dir)
	if err != nil || len(msgs) != goroutines*each {
		t.Fatalf("loaded %d messages, err %v; want %d", len(msgs), err, goroutines*each)
	}
	if it := s.State().Iteration; it != goroutines*each/10 {
		t.Errorf("iteration = %d, want %d", it, goroutines*each/10)
	}
}

var idPattern = regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-f]+$`)

func TestNewIDSortsByTime(t *testing.T) {
	base := time.Date(2025, 12, 31, 23, 59, 58, 0, time.FixedZone("X", 5*3600))
	times := []time.Time{base, base.Add(time.Second), base.Add(time.Minute), base.Add(25 * time.Hour), base.AddDate(1, 0, 0)}
	var ids []string
	for _, tm := range times {
		id := NewID(tm)
		if !idPattern.MatchString(id) {
			t.Errorf("id %q does not match %v", id, idPattern)
		}
		if !strings.HasPrefix(id, tm.UTC().Format("20060102T150405Z")) {
			t.Errorf("id %q is not prefixed with the UTC time of %v", id, tm)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids are not in time order: %q", ids)
	}
}

// Sessions started within one second (a script's back-to-back one-shots)
// still sort in the order they began, to the millisecond; many ids in one
// millisecond stay apart.
func TestNewIDSortsWithinASecond(t *testing.T) {
	base := time.Date(2026, 11, 23, 4, 47, 13, 0, time.UTC)
	var ids []string
	for ms := range 1000 {
		id := NewID(base.Add(time.Duration(ms) * time.Millisecond))
		if !idPattern.MatchString(id) || len(id) != len("20260101T000000Z-")+12 {
			t.Fatalf("id %q is not a timestamp and 12 hex digits", id)
		}
		ids = append(ids, id)
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids of one second are not in time order: %q ... %q", ids[:3], ids[len(ids)-3:])
	}
	seen := map[string]bool{}
	for range 10000 {
		id := NewID(base)
		if seen[id] {
			t.Fatalf("NewID repeated %q within 10000 calls in one millisecond", id)
		}
		seen[id] = true
	}
}

func TestNewIDUnique(t *testing.T) {
	// All in the same second: only the random part tells them apart.
	now := time.Now()
	seen := make(map[string]bool, 1000)
	for range 1000 {
		id := NewID(now)
		if seen[id] {
			t.Fatalf("NewID repeated %q within 1000 calls", id)
		}
		seen[id] = true
	}
}

func FuzzLoadMessagesNeverPanics(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}` + "\n"))
	f.Add([]byte(`{"role":"assistant","tool_calls":[{"id":"1","name":"x","arguments":"{}"}]}` + "\n" + `{"role":"tool","tool_call_id":"1"}`))
	f.Add([]byte("{\"role\":\"us"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte("null\n[]\n\"x\"\n"))
	f.Add([]byte{0xff, 0xfe, '\n', '{'})
	f.Add([]byte(`{"0000":"000000000","tool_CAlls":[]}`)) // found by fuzzing: empty vs absent tool calls
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := afero.NewMemMapFs()
		writeMessages(t, fs, "/s", string(data))
		msgs, err := LoadMessages(fs, "/s")
		if err != nil {
			if msgs != nil {
				t.Fatalf("messages returned with error %v", err)
			}
			if !strings.Contains(err.Error(), "messages.jsonl") && !strings.Contains(err.Error(), "saved conversation") {
				t.Fatalf("error does not say what it read: %v", err)
			}
			return
		}
		// Every complete line became one message; only an unterminated
		// tail may have been dropped as torn.
		complete := bytes.Count(data, []byte("\n"))
		torn := len(data) > 0 && !bytes.HasSuffix(data, []byte("\n"))
		if len(msgs) != complete && !(torn && len(msgs) == complete+1) {
			t.Fatalf("%d messages from %d complete lines (torn tail: %v)", len(msgs), complete, torn)
		}
		// What loaded must survive being saved and loaded again.
		s := newSession(t, fs, "/r")
		if err := s.AppendMessages(msgs...); err != nil {
			t.Fatal(err)
		}
		again, err := LoadMessages(fs, s.Dir)
		if err != nil {
			t.Fatalf("re-saved messages do not load: %v", err)
		}
		// Compared as JSON: an empty tool_calls list and none are the same
		// conversation, though not DeepEqual.
		a, _ := json.Marshal(again)
		b, _ := json.Marshal(msgs)
		if !bytes.Equal(a, b) {
			t.Fatalf("re-saved messages load as %s, want %s", a, b)
		}
	})
}

// TestWaitingQuestion: while a question waits, every save says
// waiting_for_input and carries it, whoever saves and whatever status it
// asks for while running; once answered, the session runs again.
func TestWaitingQuestion(t *testing.T) {
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root)
	q := &Question{ID: 2, Kind: "approval", Text: "run `ls`? [y]es / [n]o", Answers: []string{"y", "n"}}
	if err := s.SetQuestion(q); err != nil {
		t.Fatal(err)
	}
	// Another part of ralph saves "running" meanwhile (a task loop's
	// other task): the question still shows.
	if err := s.SaveState(func(st *State) { st.Status = StatusRunning; st.Turns = 3 }); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(fs, root)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusWaitingForInput || st.Question == nil || st.Question.ID != 2 || st.Turns != 3 || !Active(st.Status) {
		t.Fatalf("while waiting: %+v", st)
	}
	if err := s.SetQuestion(nil); err != nil {
		t.Fatal(err)
	}
	if st, _ = LoadState(fs, root); st.Status != StatusRunning || st.Question != nil {
		t.Fatalf("after the answer: %+v", st)
	}
	// A question that outlives the run (it ended meanwhile) does not make
	// a finished session wait.
	_ = s.SetQuestion(q)
	if err := s.SaveState(func(st *State) { st.Status = StatusInterrupted }); err != nil {
		t.Fatal(err)
	}
	if st, _ = LoadState(fs, root); st.Status != StatusInterrupted || st.Question != nil {
		t.Fatalf("a finished session: %+v", st)
	}
}

// TestSaveStateIfChangedSkipsWhatIsSaved: a save that would only move the
// clock writes nothing and leaves appended messages for the next save; a
// real change is written as SaveState writes it.
func TestSaveStateIfChangedSkipsWhatIsSaved(t *testing.T) {
	fs := &memorytest.FailFs{Fs: afero.NewMemMapFs()}
	s := newSession(t, fs, root)
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	fs.WriteErr = errors.New("no space left on device") // any write would fail
	saved, err := s.SaveStateIfChanged(func(st *State) { st.Status = StatusRunning; st.Turns = 0 })
	if saved || err != nil {
		t.Fatalf("unchanged state: saved %v, %v", saved, err)
	}
	fs.WriteErr = nil
	saved, err = s.SaveStateIfChanged(func(st *State) { st.Turns = 1 })
	if !saved || err != nil {
		t.Fatalf("changed state: saved %v, %v", saved, err)
	}
	if got := readString(t, fs, filepath.Join(root, SessionFile)); !strings.Contains(got, `"turns": 1`) {
		t.Fatalf("the change was not written:\n%s", got)
	}
	if saved, _ := s.SaveStateIfChanged(nil); saved {
		t.Fatal("saved again what was just saved")
	}
	// A reopened session does not know what was saved: it saves.
	s2, _, err := OpenSession(fs, root, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if saved, err := s2.SaveStateIfChanged(nil); !saved || err != nil {
		t.Fatalf("reopened session: saved %v, %v", saved, err)
	}
}
