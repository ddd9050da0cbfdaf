// Package images makes an image file something a model can be shown: it
// knows the four formats both wire protocols take (PNG, JPEG, GIF and
// WebP) by their first bytes, and scales an image down and re-encodes it
// until it fits the caps every provider ralph speaks accepts. It knows no
// tool and no protocol: read_file calls it, the model client encodes
// what it returns.
package images

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"

	"github.com/ralph-dev/ralph/memory/text"
	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// The caps. Anthropic's documentation asks for images whose longest side
// is at most 1568 px (larger ones are scaled down on its side, costing
// time and nothing else) and refuses an image over 5 MB; OpenAI's take
// 20 MB and scale to 2048 px. So an image goes to the model with its
// longest side at most MaxSide and at most MaxBytes encoded, which keeps
// its base64 under 5 MB on any wire.
const (
	MaxSide  = 1568
	MaxBytes = 5 << 20 * 3 / 4
	// MaxFileBytes and MaxPixels bound what is decoded at all: a file or
	// a picture larger than these (a decompression bomb, a 100-megapixel
	// scan) is refused before it takes the memory its pixels would.
	MaxFileBytes = 50 << 20
	MaxPixels    = 50_000_000
)

// MaxDecodedBytes bounds the memory a decoded image takes, estimated
// from its header (decodedBytes) before it is decoded: pixels alone do
// not, a 381 KB interlaced PNG of 7000×7000 16-bit RGBA is within
// MaxPixels and decodes to 392 MB (and took ralph past 1 GB). 256 MiB
// lets an 8K screenshot pass: 7680×4320 RGBA is 133 MB, and 265 MB at
// 16 bits a channel is still just under 256 MiB.
const MaxDecodedBytes = 256 << 20

// Media types of the formats both protocols accept.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
)

// ErrTooLarge is an image beyond MaxFileBytes, MaxPixels or
// MaxDecodedBytes, or one that
// could not be brought under MaxBytes.
var ErrTooLarge = errors.New("image too large")

// Sniff is the media type of data by its first bytes, "" when it is none
// of the four formats.
func Sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return WebP
	}
	return ""
}

// Prepared is an image as the model is shown it.
type Prepared struct {
	MediaType string
	Data      []byte
	// Width and Height are what the model sees; OrigWidth and OrigHeight
	// the file's own.
	Width, Height         int
	OrigWidth, OrigHeight int
}

// Scaled reports whether the model sees the image smaller than the file
// holds it.
func (p Prepared) Scaled() bool { return p.Width != p.OrigWidth || p.Height != p.OrigHeight }

// Prepare brings data, an image of media type mediaType (Sniff), under
// the caps: an image already within them goes as it is, byte for byte;
// a larger one is scaled so its longest side is MaxSide (a GIF's first
// frame), and encoded as JPEG when it came as one, as PNG otherwise,
// falling back to JPEG when the PNG is still over MaxBytes.
func Prepare(data []byte, mediaType string) (Prepared, error) {
	if len(data) > MaxFileBytes {
		return Prepared{}, fmt.Errorf("%w: %s, more than the %s read", ErrTooLarge, text.Size(int64(len(data))), text.Size(MaxFileBytes))
	}
	cfg, err := decodeConfig(data, mediaType)
	if err != nil {
		return Prepared{}, fmt.Errorf("not a readable %s: %w", mediaType, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Prepared{}, fmt.Errorf("not a readable %s: it has no pixels", mediaType)
	}
	if cfg.Width*cfg.Height > MaxPixels {
		return Prepared{}, fmt.Errorf("%w: %d×%d px, more than %s", ErrTooLarge, cfg.Width, cfg.Height, text.Counted(MaxPixels/1_000_000, "megapixel", "megapixels"))
	}
	if n := decodedBytes(cfg); n > MaxDecodedBytes {
		return Prepared{}, fmt.Errorf("%w: %d×%d px would take %s decoded, more than %s", ErrTooLarge, cfg.Width, cfg.Height, text.Size(n), text.Size(MaxDecodedBytes))
	}
	p := Prepared{MediaType: mediaType, Data: data, Width: cfg.Width, Height: cfg.Height, OrigWidth: cfg.Width, OrigHeight: cfg.Height}
	if max(cfg.Width, cfg.Height) <= MaxSide && len(data) <= MaxBytes {
		return p, nil
	}
	img, err := decode(data, mediaType)
	if err != nil {
		return Prepared{}, fmt.Errorf("not a readable %s: %w", mediaType, err)
	}
	w, h := Fit(cfg.Width, cfg.Height, MaxSide)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.BiLinear.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	p.Width, p.Height = w, h
	if mediaType != JPEG {
		var buf bytes.Buffer
		if err := png.Encode(&buf, dst); err != nil {
			return Prepared{}, fmt.Errorf("encode the scaled image: %w", err)
		}
		if buf.Len() <= MaxBytes {
			p.MediaType, p.Data = PNG, buf.Bytes()
			return p, nil
		}
	}
	// A photograph compresses far better as JPEG; quality steps down
	// until it fits (a 1568 px JPEG at 60 is a few hundred KB).
	for _, q := range []int{90, 80, 60} {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: q}); err != nil {
			return Prepared{}, fmt.Errorf("encode the scaled image: %w", err)
		}
		if buf.Len() <= MaxBytes {
			p.MediaType, p.Data = JPEG, buf.Bytes()
			return p, nil
		}
	}
	return Prepared{}, fmt.Errorf("%w: still over %s scaled to %d×%d px", ErrTooLarge, text.Size(MaxBytes), w, h)
}

// Fit is w×h scaled so its longest side is at most side, keeping its
// proportions; neither side is less than 1.
func Fit(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, (h*side+w/2)/w)
	}
	return max(1, (w*side+h/2)/h), side
}

// decodedBytes estimates the memory cfg's image takes decoded: its
// pixels times the bytes the decoder keeps per pixel in its colour
// model. A model not known here counts as 16-bit RGBA, the largest.
func decodedBytes(cfg image.Config) int64 {
	return int64(cfg.Width) * int64(cfg.Height) * bytesPerPixel(cfg.ColorModel)
}

func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		// A JPEG's planes take 3 bytes a pixel at most (4:4:4).
		return 3
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		return 4
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

func decodeConfig(data []byte, mediaType string) (image.Config, error) {
	r := bytes.NewReader(data)
	switch mediaType {
	case PNG:
		return png.DecodeConfig(r)
	case JPEG:
		return jpeg.DecodeConfig(r)
	case GIF:
		return gif.DecodeConfig(r)
	case WebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("unknown media type %q", mediaType)
}

func decode(data []byte, mediaType string) (image.Image, error) {
	r := bytes.NewReader(data)
	switch mediaType {
	case PNG:
		return png.Decode(r)
	case JPEG:
		return jpeg.Decode(r)
	case GIF:
		// The first frame: what a still of an animation shows.
		return gif.Decode(r)
	case WebP:
		return webp.Decode(r)
	}
	return nil, fmt.Errorf("unknown media type %q", mediaType)
}
