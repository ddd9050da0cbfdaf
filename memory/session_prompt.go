package memory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
)

// A conversation's record counts as a session only with its prompt in it
// (CreateSessionBeside makes the prompt durable before the session's
// directory takes its name). A session left without one, by a ralph
// older than that rule or by a crash of the machine, is not continued:
// what the model would be asked to go on with is not there.

// conversational are the modes whose session begins with the person's
// prompt ("" is a session recorded before modes were).
var conversational = []string{"", "oneshot", "chat", "script", "plan"}

// PromptMissing says why session id, whose saved state is st and whose
// saved conversation is msgs, is not to be continued: it began with a
// prompt but its conversation holds none. It began with one when its
// conversation was begun (the system prompt goes in right before the
// prompt), or when its events hold the prompt and it did not end (a run
// that ended before its prompt, refused by a hook say, sent nothing and
// lost nothing). It returns nil for a session that holds its prompt, for
// one that never had one (a chat opened and left without a word), and
// for a task loop, whose conversations are its agents'. The error is
// ErrNoSession, one sentence, and shows the lost prompt when a record of
// the session holds it.
func PromptMissing(fs afero.Fs, root, id string, st State, msgs []conversation.Message) error {
	if !slices.Contains(conversational, st.Mode) {
		return nil
	}
	if slices.ContainsFunc(msgs, func(m conversation.Message) bool { return m.Role == conversation.RoleUser }) {
		return nil
	}
	ended := st.Status == StatusCompleted || st.Status == StatusFailed
	if len(msgs) == 0 && ended {
		return nil
	}
	lost := firstEventWords(fs, root, id)
	if len(msgs) == 0 && strings.TrimSpace(lost) == "" {
		return nil
	}
	if lost == "" {
		return NoSessionf("session %s is not continued: ralph stopped before it saved the session's prompt, and no record holds it; send your prompt again to start anew", id)
	}
	return NoSessionf("session %s is not continued: ralph stopped before it saved the session's prompt, %s; send it again to start anew", id, QuotePrompt(lost))
}

// UnfinishedPrompt is the prompt of the newest session a crash left
// half made (a dot-named directory of the names SessionDirNames read),
// when a record in it holds one: read before recovery removes it, so
// that `ralph -c` can say what was lost. "" when none does.
func UnfinishedPrompt(fs afero.Fs, root string, names []string) string {
	var unfinished []string
	for _, name := range names {
		if strings.HasPrefix(name, ".new-") {
			unfinished = append(unfinished, name)
		}
	}
	slices.Sort(unfinished)
	for i := len(unfinished) - 1; i >= 0; i-- {
		if p := FirstPrompt(fs, root, unfinished[i]); strings.TrimSpace(p) != "" {
			return p
		}
	}
	return ""
}

// QuotePrompt shows a prompt inside a sentence: on one line, its control
// characters visible, cut at 200 bytes, in quotes.
func QuotePrompt(p string) string {
	return fmt.Sprintf("%q", text.Clip(text.OneLine(text.Visible(p)), 200))
}

// SessionRecorded reports whether session id is on disk as a session that
// `ralph -c` continues: its directory has its name, and a conversation
// there holds its prompt (PromptMissing).
func SessionRecorded(fs afero.Fs, root, id string) bool {
	if fi, err := fs.Stat(SessionDir(root, id)); err != nil || !fi.IsDir() {
		return false
	}
	msgs, err := LoadMessages(fs, SessionDir(root, id))
	if err != nil {
		return false
	}
	st, _ := LoadSessionState(fs, root, id)
	return PromptMissing(fs, root, id, st, msgs) == nil
}
