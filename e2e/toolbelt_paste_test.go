//go:build unix

package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Images pasted into the person's prompt (issue 70): a word of the prompt
// that is the path of an image file — dropped on the terminal (quoted, or
// with its spaces escaped), typed, after an @ — shows the model the image
// as read_file shows one, with a placeholder in the text naming it; a
// path outside the project too, since the person chose it. A path that
// names nothing, or a file that is no image, stays text.

// pastePart is the image part chat completions carries a 4×3 shot.png in.
func pastePart(b64 string) string {
	return `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}`
}

func TestPromptImageGoesOnChatCompletions(t *testing.T) {
	t.Parallel()
	dir, b64 := imageProject(t)
	mustWrite(t, filepath.Join(dir, "notes.png"), "not a picture\n")
	srv := inlineServer(t, `{"name":"paste","loop":true,"responses":[{"text":"A dark picture with one red dot."}]}`)
	env := cleanEnv(t)
	prompt := "look at @shot.png, not /nowhere/gone.png nor notes.png"
	if r := ralph(t, dir, env, nil, "-y", "--base-url", srv.URL, "--model", "gpt-4o", prompt); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	msgs := reqs[0].Request.Messages
	last := msgs[len(msgs)-1]
	if last.Role != "user" || len(last.MultiContent) != 2 || last.MultiContent[0].Type != "text" || last.MultiContent[1].Type != "image_url" {
		t.Fatalf("the person's message is not its text and the image: %+v", last)
	}
	want := "look at [Image #1: shot.png, 4×3 px], not /nowhere/gone.png nor notes.png"
	if got := last.MultiContent[0].Text; !strings.Contains(got, want) {
		t.Fatalf("the message's text is %q, want it to hold %q", got, want)
	}
	if body := string(reqs[0].Body); !strings.Contains(body, pastePart(b64)) {
		t.Fatalf("the request has no image part %s:\n%s", pastePart(b64), body)
	}
	noBase64InRecords(t, dir, b64)
	// The transcript shows the placeholder, never the picture's bytes.
	if r := ralph(t, dir, env, nil, "logs"); r.code != 0 || !strings.Contains(r.stdout, "[Image #1: shot.png, 4×3 px]") || strings.Contains(r.stdout, b64[:40]) {
		t.Fatalf("ralph logs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Continued, the session shows the model the picture again, read
	// back from its reference.
	if r := ralph(t, dir, env, nil, "-y", "--base-url", srv.URL, "--model", "gpt-4o", "-c", "and now?"); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if reqs = srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), pastePart(b64)) {
		t.Fatalf("the continued session's request has no image part:\n%s", reqs[len(reqs)-1].Body)
	}
}

func TestPromptImageGoesOnTheMessagesAPI(t *testing.T) {
	t.Parallel()
	dir, b64 := imageProject(t)
	srv := anthropicServer(t, `{"text":"A dark picture with one red dot."}`)
	anthropicRun(t, dir, anthropicEnv(t), srv, "-y", "--model", "claude-sonnet-4-5", "look at @shot.png")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	block := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}`
	body := string(stripCacheControl(reqs[0].Body))
	if !strings.Contains(body, `look at [Image #1: shot.png, 4×3 px]"},`+block) {
		t.Fatalf("the request:\n%s\nwant the image block %s after the person's text", body, block)
	}
	noBase64InRecords(t, dir, b64)
}

// A model without images reads read_file's sentence in the picture's
// place, and the person is told; a FIFO named like a picture is refused
// without ralph waiting on it.
func TestPromptImageTellsAModelWithoutImages(t *testing.T) {
	t.Parallel()
	dir, _ := imageProject(t)
	fifo := filepath.Join(t.TempDir(), "pipe.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, `{"name":"paste","loop":true,"responses":[{"text":"I cannot see it."}]}`)
	r := ralph(t, dir, cleanEnv(t), nil, "-y", "--base-url", srv.URL, "--model", "qwen2.5-coder", "what is in ./shot.png? and "+fifo)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	body := string(reqs[0].Body)
	if strings.Contains(body, "image_url") || !strings.Contains(body, "this model does not accept images, so shot.png was not shown to it") ||
		!strings.Contains(body, "what is in [Image #1: shot.png, 4×3 px]? and "+fifo) {
		t.Fatalf("the request:\n%s\nwant the sentence, the placeholder, the FIFO's path as text and no image", body)
	}
	for _, want := range []string{"qwen2.5-coder does not accept images", "pipe.png is not attached: it is not a regular file"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
}

// A screenshot dropped on the chat's terminal: the terminal pastes its
// path quoted (it has a space), outside the project, as a bracketed
// paste; the model gets the picture.
func TestChatPastedImagePathOutsideTheProject(t *testing.T) {
	t.Parallel()
	src, b64 := imageProject(t)
	shots := filepath.Join(t.TempDir(), "Screenshots")
	if err := os.MkdirAll(shots, 0o700); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(shots, "Screen Shot 1.png")
	if err := os.Rename(filepath.Join(src, "shot.png"), shot); err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, `{"name":"paste","loop":true,"responses":[{"text":"one red dot"}]}`)
	r := startPTY(t, t.TempDir(), cleanEnv(t, "NO_COLOR=1", "TERM=xterm"), "chat", "--base-url", srv.URL, "--model", "gpt-4o")
	r.waitIdle(20*time.Second, nil)
	r.typeKeys("\x1b[200~'" + shot + "'\x1b[201~ what is this?\r")
	r.waitIdle(30*time.Second, func(s string) bool { return strings.Contains(s, "one red dot") })
	r.leave(0, 20*time.Second)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, pastePart(b64)) || !strings.Contains(body, "[Image #1: Screen Shot 1.png, 4×3 px] what is this?") {
		t.Fatalf("the request:\n%s\nwant the image part and the placeholder", body)
	}
	if record := readFileT(t, filepath.Join(sessionDir(t, r.cmd.Dir), "messages.jsonl")); strings.Contains(record, b64[:40]) || !strings.Contains(record, `"ref":"images/`) {
		t.Fatalf("messages.jsonl holds the image's bytes or no reference:\n%s", record)
	}
	if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
		t.Fatal(err)
	}
}
