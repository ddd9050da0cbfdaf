package memory

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/spf13/afero"
)

// An image of a tool result is kept by reference: messages.jsonl names
// it and holds none of its bytes, the bytes are a file under the content
// address, written once however often the image is read, and a load
// reads them back; a file changed or gone gives no bytes, never others.
func TestImagesAreKeptByReference(t *testing.T) {
	t.Parallel()
	fs := afero.NewMemMapFs()
	s := newSession(t, fs, root)
	data := []byte("\x89PNG\r\n\x1a\nthe picture's own bytes")
	img := conversation.NewImage("shot.png", "image/png", data, 2, 1)
	msgs := sampleConversation()
	msgs[3].Images = []conversation.Image{img}
	if err := s.AppendMessages(msgs...); err != nil {
		t.Fatal(err)
	}
	again := conversation.Message{Role: conversation.RoleTool, ToolCallID: "call_3", Content: "[shot.png]", Images: []conversation.Image{img}}
	if err := s.AppendMessages(again); err != nil {
		t.Fatal(err)
	}
	record, _ := afero.ReadFile(fs, filepath.Join(s.Dir, "messages.jsonl"))
	if bytes.Contains(record, []byte("the picture")) || bytes.Contains(record, []byte("dGhlIHBpY3R1cmUncyBvd24gYnl0ZXM")) || !strings.Contains(string(record), `"ref":"`+img.Ref+`"`) {
		t.Fatalf("messages.jsonl:\n%s\nwant the image by reference only", record)
	}
	files, _ := afero.ReadDir(fs, filepath.Join(s.Dir, "images"))
	if len(files) != 1 || "images/"+files[0].Name() != img.Ref {
		t.Fatalf("images/ holds %v, want the one file %s", files, img.Ref)
	}
	got, err := LoadMessages(fs, s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got[3].Images) != 1 || !bytes.Equal(got[3].Images[0].Data, data) || got[3].Images[0].Name != "shot.png" {
		t.Fatalf("loaded image %+v", got[3].Images)
	}
	if err := afero.WriteFile(fs, filepath.Join(s.Dir, filepath.FromSlash(img.Ref)), []byte("another picture"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ = LoadMessages(fs, s.Dir)
	if got[3].Images[0].Data != nil {
		t.Fatal("a changed image file was loaded as the image")
	}
}

func TestImageRefsNameNothingOutsideImages(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"../../etc/passwd", "images/../x.png", "images/" + strings.Repeat("a", 64) + ".png/../../x", "images/" + strings.Repeat("g", 64) + ".png", "/abs.png"} {
		if conversation.ValidImageRef(ref) {
			t.Errorf("ValidImageRef(%q) = true", ref)
		}
	}
	if !conversation.ValidImageRef("images/" + strings.Repeat("a", 64) + ".webp") {
		t.Error("a content address was refused")
	}
}

// An image appended while a new session's directory is still on its way
// to its name goes with the directory: the rename is not refused for a
// directory the image made under the final name.
func TestAnImageBeforeTheSessionHasItsNameGoesWithIt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	id := "20250301T120000Z-000ccccccccc"
	s, err := CreateSessionBeside(afero.NewOsFs(), root, id, State{Status: StatusRunning})
	if err != nil {
		t.Fatal(err)
	}
	img := conversation.NewImage("a.png", "image/png", []byte("\x89PNG\r\n\x1a\nbytes"), 1, 1)
	if err := s.AppendMessages(conversation.Message{Role: conversation.RoleUser, Content: "look", Images: []conversation.Image{img}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(nil); err != nil {
		t.Fatalf("the session could not take its name: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := LoadMessages(afero.NewOsFs(), SessionDir(root, id))
	if err != nil || len(got) != 1 || len(got[0].Images) != 1 || got[0].Images[0].Data == nil {
		t.Fatalf("loaded %+v, %v", got, err)
	}
}
