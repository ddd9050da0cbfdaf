package tools

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFileOfAnImageReturnsTheImage(t *testing.T) {
	t.Parallel()
	ts := newTestToolset(t, Options{})
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(ts.Root(), "img", "dot.png"), b.String())
	res := call(t, ts, "read_file", map[string]any{"path": "img/dot.png"})
	if res.IsError || res.Output != "[img/dot.png: PNG image, 3×2 px]" || len(res.Images) != 1 {
		t.Fatalf("result %+v", res)
	}
	if img := res.Images[0]; !bytes.Equal(img.Data, b.Bytes()) || img.MediaType != "image/png" || img.Name != "img/dot.png" || img.Width != 3 {
		t.Fatalf("image %+v", img)
	}
	// A file that only starts like a PNG is said to be broken, in one sentence.
	writeTestFile(t, filepath.Join(ts.Root(), "bad.png"), "\x89PNG\r\n\x1a\nbroken")
	mustErr(t, call(t, ts, "read_file", map[string]any{"path": "bad.png"}), "bad.png cannot be shown as an image: not a readable image/png")
	// The door is read_file's: an image through a link out of the project is refused.
	outside := filepath.Join(t.TempDir(), "out.png")
	if err := os.WriteFile(outside, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ts.Root(), "link.png")); err != nil {
		t.Fatal(err)
	}
	if res := call(t, ts, "read_file", map[string]any{"path": "link.png"}); !res.IsError || len(res.Images) != 0 {
		t.Fatalf("a link out of the project: %+v", res)
	}
}
