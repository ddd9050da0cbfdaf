package e2e

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The images of issue 70: read_file of a picture shows the model the
// picture, as an image part of its wire protocol, when the model accepts
// images; a model that does not reads one sentence in its place. The
// conversation keeps the image by reference, never its base64, and a
// continued session shows it again from that reference.

// imageProject is a project holding shot.png, a small picture, and the
// picture's base64 as a data: URL and an Anthropic source carry it.
func imageProject(t *testing.T) (dir, b64 string) {
	t.Helper()
	dir = t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{200, 30, 30, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "shot.png"), b.String())
	return dir, base64.StdEncoding.EncodeToString(b.Bytes())
}

const readShot = `{"tool_calls":[{"id":"call_img","name":"read_file","arguments":"{\"path\":\"shot.png\"}"}]},
	{"text":"A dark picture with one red dot."},{"text":"Still the red dot."}`

// noBase64InRecords fails the test when the session's messages.jsonl
// holds the picture's bytes, and when its image file is not there.
func noBase64InRecords(t *testing.T, dir, b64 string) {
	t.Helper()
	sess := sessionDir(t, dir)
	if record := readFileT(t, filepath.Join(sess, "messages.jsonl")); strings.Contains(record, b64[:40]) || !strings.Contains(record, `"ref":"images/`) {
		t.Fatalf("messages.jsonl holds the image's bytes or no reference:\n%s", record)
	}
	if files, _ := filepath.Glob(filepath.Join(sess, "images", "*.png")); len(files) != 1 {
		t.Fatalf("the session's images: %v, want the one picture", files)
	}
}

func TestReadFileShowsAnImageOnChatCompletions(t *testing.T) {
	t.Parallel()
	dir, b64 := imageProject(t)
	srv := inlineServer(t, `{"name":"image","responses":[`+readShot+`]}`)
	env := cleanEnv(t)
	if r := ralph(t, dir, env, nil, "-y", "--base-url", srv.URL, "--model", "gpt-4o", "what is in shot.png?"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	part := `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}`
	if body := string(reqs[1].Body); !strings.Contains(body, part) || !strings.Contains(body, `"[shot.png: PNG image, 4×3 px]"`) {
		t.Fatalf("the request after read_file:\n%s\nwant the image part %s", body, part)
	}
	msgs := reqs[1].Request.Messages
	if last := msgs[len(msgs)-1]; last.Role != "user" || len(last.MultiContent) != 2 || msgs[len(msgs)-2].Role != "tool" {
		t.Fatalf("the image is not a user message right after the tool result: %+v", msgs[len(msgs)-2:])
	}
	noBase64InRecords(t, dir, b64)
	// Continued, the session shows the model the picture again, read
	// back from its reference.
	if r := ralph(t, dir, env, nil, "-y", "--base-url", srv.URL, "--model", "gpt-4o", "-c", "and now?"); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if reqs = srv.Requests(); len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), part) {
		t.Fatalf("the continued session's request has no image part:\n%s", reqs[len(reqs)-1].Body)
	}
}

func TestReadFileShowsAnImageOnTheMessagesAPI(t *testing.T) {
	t.Parallel()
	dir, b64 := imageProject(t)
	srv := anthropicServer(t, readShot)
	anthropicRun(t, dir, anthropicEnv(t), srv, "-y", "--model", "claude-sonnet-4-5", "what is in shot.png?")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	block := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}`
	body := string(reqs[1].Body)
	if !strings.Contains(body, `{"type":"tool_result","tool_use_id":"call_img","content":[{"type":"text","text":"[shot.png: PNG image, 4×3 px]"},`+block+`]`) {
		t.Fatalf("the request after read_file:\n%s\nwant the image block %s inside the tool_result", body, block)
	}
	noBase64InRecords(t, dir, b64)
}

func TestReadFileOfAnImageTellsAModelWithoutImages(t *testing.T) {
	t.Parallel()
	dir, _ := imageProject(t)
	srv := inlineServer(t, `{"name":"image","responses":[`+readShot+`]}`)
	if r := ralph(t, dir, cleanEnv(t), nil, "-y", "--base-url", srv.URL, "--model", "qwen2.5-coder", "what is in shot.png?"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	body := string(reqs[1].Body)
	if strings.Contains(body, "image_url") || !strings.Contains(body, "this model does not accept images, so shot.png was not shown to it") {
		t.Fatalf("the request after read_file:\n%s\nwant the sentence and no image", body)
	}
	if _, err := os.Stat(filepath.Join(dir, "shot.png")); err != nil {
		t.Fatal(err)
	}
}
