package images

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"
)

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSniffKnowsTheFourFormats(t *testing.T) {
	t.Parallel()
	for head, want := range map[string]string{
		"\x89PNG\r\n\x1a\n...": PNG, "\xff\xd8\xff\xe0": JPEG, "GIF89a..": GIF, "GIF87a..": GIF,
		"RIFF\x00\x00\x00\x00WEBPVP8 ": WebP, "RIFF\x00\x00\x00\x00WAVE": "", "%PDF-1.7": "", "": "",
	} {
		if got := Sniff([]byte(head)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", head, got, want)
		}
	}
}

func TestFitKeepsProportions(t *testing.T) {
	t.Parallel()
	for _, c := range [][4]int{{3000, 2000, 1568, 1045}, {2000, 3000, 1045, 1568}, {800, 600, 800, 600}, {10000, 1, 1568, 1}, {1568, 1568, 1568, 1568}} {
		if w, h := Fit(c[0], c[1], MaxSide); w != c[2] || h != c[3] {
			t.Errorf("Fit(%d, %d) = %d×%d, want %d×%d", c[0], c[1], w, h, c[2], c[3])
		}
	}
}

func TestASmallImageGoesAsItIs(t *testing.T) {
	t.Parallel()
	data := encodePNG(t, image.NewGray(image.Rect(0, 0, 40, 30)))
	p, err := Prepare(data, PNG)
	if err != nil || !bytes.Equal(p.Data, data) || p.MediaType != PNG || p.Scaled() || p.Width != 40 || p.Height != 30 {
		t.Fatalf("Prepare = %+v, %v", p, err)
	}
}

func TestALargeImageIsScaledToTheLongestSide(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 3136, 1000))
	for x := range 3136 {
		img.Set(x, 500, color.RGBA{255, 0, 0, 255})
	}
	p, err := Prepare(encodePNG(t, img), PNG)
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != MaxSide || p.Height != 500 || !p.Scaled() || p.OrigWidth != 3136 || p.MediaType != PNG || len(p.Data) > MaxBytes {
		t.Fatalf("Prepare = %dx%d (from %dx%d) %s, %d bytes", p.Width, p.Height, p.OrigWidth, p.OrigHeight, p.MediaType, len(p.Data))
	}
	got, err := png.DecodeConfig(bytes.NewReader(p.Data))
	if err != nil || got.Width != MaxSide || got.Height != 500 {
		t.Fatalf("the scaled PNG is %+v, %v", got, err)
	}
}

// A picture of noise compresses badly as PNG: scaled, it is still over
// the byte cap, and goes as JPEG instead.
func TestANoisyImageOverTheByteCapGoesAsJPEG(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 1600, 1600))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.IntN(256))
	}
	p, err := Prepare(encodePNG(t, img), PNG)
	if err != nil {
		t.Fatal(err)
	}
	if p.MediaType != JPEG || len(p.Data) > MaxBytes || p.Width != MaxSide || p.Height != MaxSide {
		t.Fatalf("Prepare = %s %dx%d, %d bytes", p.MediaType, p.Width, p.Height, len(p.Data))
	}
	if _, err := jpeg.DecodeConfig(bytes.NewReader(p.Data)); err != nil {
		t.Fatal(err)
	}
}

func TestAGIFIsScaledFromItsFirstFrame(t *testing.T) {
	t.Parallel()
	frame := image.NewPaletted(image.Rect(0, 0, 2000, 100), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: []*image.Paletted{frame, frame}, Delay: []int{1, 1}}); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(b.Bytes(), GIF)
	if err != nil || p.MediaType != PNG || p.Width != MaxSide || p.Height != 78 {
		t.Fatalf("Prepare = %s %dx%d, %v", p.MediaType, p.Width, p.Height, err)
	}
}

func TestTooManyPixelsOrBrokenBytesAreRefused(t *testing.T) {
	t.Parallel()
	// A PNG header that claims 20000×20000 px: refused before decoding.
	huge := encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1)))
	huge = append([]byte(nil), huge...)
	copy(huge[16:24], []byte{0, 0, 0x4e, 0x20, 0, 0, 0x4e, 0x20})
	binary.BigEndian.PutUint32(huge[29:33], crc32.ChecksumIEEE(huge[12:29]))
	if _, err := Prepare(huge, PNG); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a 400-megapixel PNG: %v, want ErrTooLarge", err)
	}
	if _, err := Prepare([]byte("\x89PNG\r\n\x1a\ngarbage"), PNG); err == nil {
		t.Fatal("a broken PNG was accepted")
	}
}

// withSize is png, a PNG, claiming w×h px in its header (its CRC made
// right again): DecodeConfig reads no further, so the caps are checked
// without a picture that size being made.
func withSize(png []byte, w, h uint32) []byte {
	b := append([]byte(nil), png...)
	binary.BigEndian.PutUint32(b[16:20], w)
	binary.BigEndian.PutUint32(b[20:24], h)
	binary.BigEndian.PutUint32(b[29:33], crc32.ChecksumIEEE(b[12:29]))
	return b
}

func TestDecodedMemoryIsEstimatedFromTheHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		img  image.Image
		want int64
	}{
		{image.NewNRGBA64(image.Rect(0, 0, 40, 30)), 40 * 30 * 8},
		{image.NewNRGBA(image.Rect(0, 0, 40, 30)), 40 * 30 * 4},
		{image.NewGray16(image.Rect(0, 0, 40, 30)), 40 * 30 * 2},
		{image.NewGray(image.Rect(0, 0, 40, 30)), 40 * 30},
		{image.NewPaletted(image.Rect(0, 0, 40, 30), color.Palette{color.Black, color.White}), 40 * 30},
	} {
		cfg, err := decodeConfig(encodePNG(t, c.img), PNG)
		if err != nil {
			t.Fatal(err)
		}
		if got := decodedBytes(cfg); got != c.want {
			t.Errorf("%T: %d bytes decoded, want %d", c.img, got, c.want)
		}
	}
	// An 8K screenshot passes, 16 bits a channel too.
	for _, img := range []image.Image{image.NewNRGBA(image.Rect(0, 0, 1, 1)), image.NewNRGBA64(image.Rect(0, 0, 1, 1))} {
		cfg, err := decodeConfig(withSize(encodePNG(t, img), 7680, 4320), PNG)
		if err != nil {
			t.Fatal(err)
		}
		if n := decodedBytes(cfg); n > MaxDecodedBytes {
			t.Errorf("an 8K %T screenshot takes %d bytes, over the %d bound", img, n, MaxDecodedBytes)
		}
	}
}

func TestAnImageTooLargeDecodedIsRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	// 7000×7000 is within MaxPixels, but at 16 bits a channel it would
	// take 392 MB decoded: refused from its header alone.
	bomb := withSize(encodePNG(t, image.NewNRGBA64(image.Rect(0, 0, 40, 30))), 7000, 7000)
	_, err := Prepare(bomb, PNG)
	if !errors.Is(err, ErrTooLarge) || err.Error() != "image too large: 7000×7000 px would take 373.8 MB decoded, more than 256.0 MB" {
		t.Fatalf("Prepare of a 7000×7000 16-bit PNG: %v, want ErrTooLarge naming the decoded size", err)
	}
}
