package memory

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/spf13/afero"
)

// SessionEmpty reports whether session id was left without anything
// done in it: no message, no turn, no iteration of a task loop, and no
// ralph working in it now. That is a chat opened and left without a word
// (or a /clear that nothing followed). Such a session is kept on disk,
// since its lock, control socket and events were real while it ran, but
// it is never "the latest session" that -c and `ralph resume` continue,
// nor listed by --resume's picker or `ralph sessions`: continuing it would
// skip the conversation the person had before it. A live one counts as
// used, since `ralph watch` and `ralph status` follow the chat open now.
// It costs a stat for a session with messages (the common case), so
// listings stay cheap in a project of many sessions.
func SessionEmpty(fs afero.Fs, root, id string) bool {
	fi, err := fs.Stat(filepath.Join(SessionDir(root, id), "messages.jsonl"))
	if err == nil && fi.Size() > 0 {
		return false
	}
	st, err := LoadSessionState(fs, root, id)
	return err == nil && !Active(st.Status) && st.Turns == 0 && st.Iteration == 0
}

// SessionUnreached reports whether session id holds the person's words
// but never an exchange with the model: no answer, no tool call, no
// refusal, not a task loop, and no ralph working in it now (its requests all
// failed to reach the endpoint: a wrong --base-url, a server down). Its
// prompt is what the person asked first there. Such a session is kept
// (its prompt is durable), but -c goes on with the conversation before
// it when there is one, and says so. The conversation is read only up to
// its first answer, which comes right after the first prompt.
func SessionUnreached(fs afero.Fs, root, id string) (prompt string, ok bool) {
	st, err := LoadSessionState(fs, root, id)
	// A task loop ("run") works tasks, not a prompt: it is not one.
	if err != nil || Active(st.Status) || st.Mode == "run" || st.Usage.InputTokens+st.Usage.OutputTokens > 0 {
		return "", false
	}
	f, err := fs.Open(filepath.Join(SessionDir(root, id), "messages.jsonl"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var m conversation.Message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			return "", false
		}
		switch {
		case m.Role == conversation.RoleAssistant || m.Role == conversation.RoleTool || m.Refused != "":
			return "", false
		case m.Role == conversation.RoleUser && prompt == "" && strings.TrimSpace(m.Content) != "":
			prompt = m.Content
		}
	}
	return prompt, prompt != "" && sc.Err() == nil
}

// FirstPrompt is what the person first asked in session id, the words a
// listing tells sessions apart by, or "" when there is none. It is the
// main agent's first user_message in events.jsonl (session_started's
// text in records from before issue 57, where only that event carried
// the prompt): the person's own words, also where ralph wrapped them in
// a prompt of its own (ralph plan). A task loop is asked nothing: its
// first words are the title of the first task it took. A session without
// events falls back to the first user message of its conversation. Both
// files are read only up to what is wanted, which is near their start,
// so a listing of many long sessions does not read them whole.
func FirstPrompt(fs afero.Fs, root, id string) string {
	if s := firstEventWords(fs, root, id); s != "" {
		return s
	}
	f, err := fs.Open(filepath.Join(SessionDir(root, id), "messages.jsonl"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var m conversation.Message
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Role == conversation.RoleUser && strings.TrimSpace(m.Content) != "" {
			return m.Content
		}
	}
	return ""
}

// firstWordsLines bounds how far into events.jsonl FirstPrompt looks: a
// prompt or a first task comes within the first few events of a run.
const firstWordsLines = 2000

// firstEventWords is FirstPrompt read from events.jsonl. The event types
// are the event package's (coordinator/event), named here as strings
// since memory sits below it.
func firstEventWords(fs afero.Fs, root, id string) string {
	f, err := fs.Open(LogPath(root, id, EventsLog))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for n := 0; n < firstWordsLines && sc.Scan(); n++ {
		var ev struct {
			Type    string `json:"type"`
			AgentID string `json:"agent_id"`
			Text    string `json:"text"`
			Output  string `json:"output"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || (ev.AgentID != "" && ev.AgentID != "main") {
			continue
		}
		switch ev.Type {
		case "user_message", "session_started":
			if strings.TrimSpace(ev.Text) != "" {
				return ev.Text
			}
		case "task_changed":
			if strings.TrimSpace(ev.Output) != "" {
				return ev.Output
			}
		}
	}
	return ""
}

// RequestPrompt is what the person asked in the request of session id
// that began at the session's turn request (a checkpoint entry's
// Request), or "" when events.jsonl does not say: the main agent's last
// user_message before its turn_started of that turn. It is what /diff and
// undo show of "your last request", which is seldom the session's first.
func RequestPrompt(fs afero.Fs, root, id string, request int) string {
	f, err := fs.Open(LogPath(root, id, EventsLog))
	if err != nil || request <= 0 {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	last := ""
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			AgentID string `json:"agent_id"`
			Turn    int    `json:"turn"`
			Text    string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || (ev.AgentID != "" && ev.AgentID != "main") {
			continue
		}
		switch ev.Type {
		case "user_message", "session_started":
			if strings.TrimSpace(ev.Text) != "" {
				last = ev.Text
			}
		case "turn_started":
			if ev.Turn == request {
				return last
			}
		}
	}
	return ""
}

// NearestSessions are up to n of ids that look like want, a mistyped or
// stale id: those containing the longest run of want's leading
// characters first, then by edit distance to the part of the id as long
// as want; none when nothing is near. It is what "no session matches"
// offers instead.
func NearestSessions(ids []string, want string, n int) []string {
	if want == "" || n <= 0 {
		return nil
	}
	type scored struct {
		id           string
		prefix, dist int
	}
	var all []scored
	for _, id := range ids {
		s := scored{id: id, dist: len(want) + len(id)}
		for k := len(want); k > 0; k-- {
			if strings.Contains(id, want[:k]) {
				s.prefix = k
				break
			}
		}
		// The id's window of want's length that is nearest to want: people
		// copy a part of an id, from anywhere in it.
		for i := 0; i+len(want) <= len(id) || i == 0; i++ {
			end := min(len(id), i+len(want))
			s.dist = min(s.dist, text.Distance(want, id[i:end]))
			if end == len(id) {
				break
			}
		}
		all = append(all, s)
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		if a.prefix != b.prefix {
			return b.prefix - a.prefix
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(b.id, a.id) // newer first
	})
	var out []string
	for _, s := range all {
		// Near is a run of four or more of want's leading characters, or
		// a third of its characters wrong at most: a character or two in
		// common (every id has digits and hex) is chance, not a likeness.
		if s.prefix < min(4, len(want)) && s.dist > len(want)/3 {
			continue
		}
		out = append(out, s.id)
		if len(out) == n {
			break
		}
	}
	return out
}

// worthContinuing is ids (sorted, oldest first) cut after the newest
// session that is not empty, so "the latest session" is never one opened
// and left without a word (SessionEmpty). When every session is empty,
// ids are left as they are.
func worthContinuing(fs afero.Fs, root string, ids []string) []string {
	for k := len(ids) - 1; k >= 0; k-- {
		if !SessionEmpty(fs, root, ids[k]) {
			return ids[:k+1]
		}
	}
	return ids
}
