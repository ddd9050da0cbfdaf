package instructions

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestWithImagesReplacesEachImagePathWithItsPlaceholder(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	writePNG(t, filepath.Join(root, "sub", "a.png"), 4, 3)
	writePNG(t, filepath.Join(outside, "Screen Shot.png"), 2, 2)
	var said []string
	p := &Reader{Root: root, StartDir: "sub", Notify: func(s string) { said = append(said, s) }}
	msg := fmt.Sprintf("@a.png vs '%s/Screen Shot.png', again a.png, not gone.png", outside)
	got, shown := p.WithImages(msg, "gpt-4o")
	want := "[Image #1: a.png, 4×3 px] vs [Image #2: Screen Shot.png, 2×2 px], again [Image #1: a.png, 4×3 px], not gone.png"
	if got != want || len(shown) != 2 || shown[0].Name != "a.png" || shown[1].Width != 2 {
		t.Fatalf("WithImages = %q, %d images; want %q", got, len(shown), want)
	}
	if len(said) != 0 {
		t.Errorf("said %q to the person, want nothing", said)
	}
	// A model without images: the person is told, the images still go
	// (the model client puts the sentence in their place).
	if _, shown = p.WithImages("@a.png", "qwen2.5-coder"); len(shown) != 1 || len(said) != 1 || !strings.Contains(said[0], "qwen2.5-coder does not accept images") {
		t.Errorf("without images: %d images, said %q", len(shown), said)
	}
}

func TestWithImagesShowsAtMostFiveImages(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var words []string
	for i := range MaxPromptImages + 1 {
		writePNG(t, filepath.Join(root, fmt.Sprintf("%d.png", i)), i+1, 1)
		words = append(words, fmt.Sprintf("%d.png", i))
	}
	var said []string
	p := &Reader{Root: root, Notify: func(s string) { said = append(said, s) }}
	got, shown := p.WithImages(strings.Join(words, " "), "gpt-4o")
	if len(shown) != MaxPromptImages || !strings.HasSuffix(got, "[Image #5: 4.png, 5×1 px] 5.png") {
		t.Fatalf("WithImages = %q, %d images", got, len(shown))
	}
	if len(said) != 1 || !strings.Contains(said[0], "5.png is not attached: one message shows the model at most 5 images") {
		t.Errorf("said %q", said)
	}
}
