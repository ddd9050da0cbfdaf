//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// recordChecker is a stand-in model that, at every request, reads the
// session records of the project at dir and notes each message of the
// request that none of them holds: what the model was sent must be on
// disk first ("write before do"). It answers the prompt that says
// "touch" with a run_command, and everything else with text.
type recordChecker struct {
	dir     string
	mu      sync.Mutex
	prompts []string // the last message of every request
	missing []string
}

func (rc *recordChecker) serve(r llmtest.RecordedRequest) llmtest.Response {
	msgs := r.Request.Messages
	// A new session's directory is renamed into place beside its first
	// request: a read that meets the rename is made again. Nothing is
	// appended meanwhile (the model has not answered), so a message
	// missing from every read was never written.
	var missing []string
	for try := 0; try < 5; try++ {
		missing = rc.notOnDisk(r.Index, msgs)
		if len(missing) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.missing = append(rc.missing, missing...)
	last := msgs[len(msgs)-1]
	rc.prompts = append(rc.prompts, last.Content)
	if last.Role == "user" && strings.HasSuffix(last.Content, "touch it") {
		return llmtest.Response{Text: "touching", ToolCalls: []llmtest.ToolCall{{Name: "run_command", Arguments: `{"command":"touch ran.txt"}`}}}
	}
	return llmtest.Response{Text: "noted"}
}

// notOnDisk is each message of a request that no session record of the
// project holds.
func (rc *recordChecker) notOnDisk(index int, msgs []openai.ChatCompletionMessage) []string {
	var records []byte
	files, _ := filepath.Glob(filepath.Join(rc.dir, ".ralph", "sessions", "*", "messages.jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		records = append(records, b...)
	}
	var missing []string
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		if m.Role != "user" && m.Role != "tool" || m.Content == "" {
			continue
		}
		// Messages of the person's that went unanswered are sent as one
		// (their record keeps them apart): each part must be on disk.
		for _, part := range strings.Split(m.Content, "\n\n") {
			buf.Reset()
			_ = enc.Encode(part)
			quoted := bytes.TrimSpace(buf.Bytes())
			if !bytes.Contains(records, quoted[1:len(quoted)-1]) {
				missing = append(missing, fmt.Sprintf("request %d: %s %q", index, m.Role, m.Content))
				break
			}
		}
	}
	return missing
}

// seen is every request's last message so far, and what was sent
// without its record.
func (rc *recordChecker) seen() ([]string, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.prompts...), append([]string(nil), rc.missing...)
}

// TestAFailedAppendSendsNothing fails, with strace, a write of `ralph -c`
// to the session's messages.jsonl with ENOSPC: the first (the prompt's),
// or a later one (strace counts each thread's writes apart, so which of
// the model's turn, the tool's result or the answer it hits is the
// scheduler's; the log says, and the test expects accordingly). The run
// stops before the request that would carry the unwritten message, in one
// sentence, exit 1; the stand-in model never receives a message that is
// not on disk; a turn that is not recorded runs no tool; and the next
// `ralph -c` goes on with its prompt from a conversation the record holds
// whole (issue 89, item 3).
func TestAFailedAppendSendsNothing(t *testing.T) {
	t.Parallel()
	strace := regexp.MustCompile(`write\(\d+<[^>]*messages\.jsonl>, "\{\\"role\\":\\"(\w+)\\",\\"content\\":\\"(\w+).*ENOSPC.*\(INJECTED\)`)
	t.Run("the first write", func(t *testing.T) {
		if !failedAppend(t, 1, strace) {
			t.Fatal("strace injected nothing into the first write")
		}
	})
	t.Run("a later write", func(t *testing.T) {
		hit := 0
		for attempt := 1; hit < 3; attempt++ {
			if failedAppend(t, 2, strace) {
				hit++
			}
			if attempt == 10 && hit == 0 {
				t.Fatalf("in %d runs no thread of ralph wrote messages.jsonl twice", attempt)
			}
		}
	})
}

// failedAppend is one run of TestAFailedAppendSendsNothing; false when
// strace injected nothing.
func failedAppend(t *testing.T, when int, strace *regexp.Regexp) bool {
	dir := realTempDir(t)
	rc := &recordChecker{dir: dir}
	srv := llmtest.NewServerFunc(rc.serve)
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	if r := ralph(t, dir, env, nil, "-y", "first prompt"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "messages.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one session's messages.jsonl, have %q", files)
	}
	rel, _ := filepath.Rel(dir, files[0])
	run := underStrace(t, dir, env, []string{"-q", "-s", "80", "-e", "signal=none", "-e", "trace=write",
		"-e", fmt.Sprintf("inject=write:error=ENOSPC:when=%d", when), "-P", rel, "-P", files[0]},
		"-y", "-c", "second prompt: touch it")
	m := strace.FindStringSubmatch(run.log)
	if m == nil {
		t.Logf("write %d: strace injected nothing", when)
		return false
	}
	// What the failed write was decides what the broken run did before
	// it: the requests it made and whether the tool ran.
	failed := m[1] + " " + m[2]
	var requests int
	var ran bool
	switch failed {
	case "user second":
		requests, ran = 0, false
	case "assistant touching":
		requests, ran = 1, false
	case "tool no":
		requests, ran = 1, true
	case "assistant noted":
		requests, ran = 2, true
	default:
		t.Fatalf("strace failed an unexpected write (%s):\n%s", failed, run.log)
	}
	t.Logf("write %d failed the %s line", when, failed)
	if run.code != 1 {
		t.Errorf("exit %d after the failed append, want 1; stderr:\n%s", run.code, run.stderr)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(run.stderr), "\n") {
		// (strace's word on -P, and ralph's note on the variables a
		// command does not get, which the first command brings.)
		if !strings.Contains(l, "strace: Requested path") && !strings.HasPrefix(l, "ralph: commands run without") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "is full (") {
		t.Errorf("the failure is not one sentence naming the full disk:\n%s", run.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); (err == nil) != ran {
		t.Errorf("the tool ran: %v, want %v", err == nil, ran)
	}
	prompts, _ := rc.seen()
	if got := len(prompts) - 1; got != requests {
		t.Errorf("the broken run made %d requests, want %d: %q", got, requests, prompts)
	}
	r := ralph(t, dir, env, nil, "-y", "-c", "third prompt")
	if r.code != 0 {
		t.Fatalf("-c after the failed append: exit %d: %s", r.code, r.stderr)
	}
	prompts, missing := rc.seen()
	if last := prompts[len(prompts)-1]; !strings.Contains(last, "third prompt") {
		t.Errorf("-c did not go on with its prompt: the last request ends with %q", last)
	}
	if len(missing) > 0 {
		t.Errorf("requests carried messages their session's record lacks:\n%s", strings.Join(missing, "\n"))
	}
	return true
}

// TestContinueRefusesAHole: every line of messages.jsonl carries its
// place in the conversation ("seq"), so a record that lost a message in
// its middle is told from a whole one: `ralph -c` refuses it in one
// sentence, exit 2, and sends nothing; a record without seqs (an older
// ralph's) is continued as before, its new lines numbered on from its
// length (issue 89, item 3).
func TestContinueRefusesAHole(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	rc := &recordChecker{dir: dir}
	srv := llmtest.NewServerFunc(rc.serve)
	t.Cleanup(srv.Close)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	for _, args := range [][]string{{"first prompt"}, {"-c", "second prompt"}} {
		if r := ralph(t, dir, env, nil, append([]string{"-y"}, args...)...); r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".ralph", "sessions", "*", "messages.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one session's messages.jsonl, have %q", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		if want := fmt.Sprintf(`,"seq":%d}`, i+1); !strings.Contains(l, want) {
			t.Fatalf("line %d has no %s: %s", i+1, want, l)
		}
	}
	if len(lines) != 5 || !strings.Contains(lines[3], "second prompt") {
		t.Fatalf("want system, prompt, answer, prompt, answer; have:\n%s", data)
	}

	// The second prompt is lost: the answer to it follows the first.
	holed := strings.Join(append(append([]string{}, lines[:3]...), lines[4:]...), "") + "\n"
	if err := os.WriteFile(files[0], []byte(holed), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := rc.seen()
	r := ralph(t, dir, env, nil, "-y", "-c", "third prompt")
	if r.code != 2 {
		t.Errorf("-c on a record with a hole: exit %d, want 2; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "is not continued: its conversation's record lacks a message before line 4") {
		t.Errorf("-c does not say the record has a hole:\n%s", r.stderr)
	}
	if after, _ := rc.seen(); len(after) != len(before) {
		t.Errorf("-c on a record with a hole sent %q", after[len(before):])
	}

	// The record as an older ralph wrote it, without seqs, whole.
	old := regexp.MustCompile(`,"seq":\d+}`).ReplaceAllString(string(data), "}")
	if err := os.WriteFile(files[0], []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := ralph(t, dir, env, nil, "-y", "-c", "third prompt"); r.code != 0 {
		t.Fatalf("-c on a record without seqs: exit %d: %s", r.code, r.stderr)
	}
	data, _ = os.ReadFile(files[0])
	lines = strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 7 || !strings.Contains(lines[5], `"third prompt","seq":6}`) || !strings.Contains(lines[6], `,"seq":7}`) {
		t.Errorf("the new lines of a record without seqs are not numbered on from its length:\n%s", data)
	}
	if _, missing := rc.seen(); len(missing) > 0 {
		t.Errorf("requests carried messages their session's record lacks:\n%s", strings.Join(missing, "\n"))
	}
}
