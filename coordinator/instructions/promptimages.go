package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/mentions"
	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/images"
)

// MaxPromptImages bounds the images one prompt shows the model: five
// at the caps of workers/images stay under the 32 MB a request to
// Anthropic may be.
const MaxPromptImages = 5

// WithImages is a person's message (a chat line, a one-shot's prompt)
// with each word that is the path of an image file (mentions.ImagePaths:
// dropped on the terminal, typed, after an @) replaced by a placeholder
// naming it, "[Image #1: shot.png, 800×600 px]", as Claude Code shows a
// pasted image as "[Image #1]", and the images in that order, prepared
// as read_file prepares one (workers/images), for the coordinator's
// AttachImages. A relative path is the directory the person started
// in's, "~/" their home's; a path outside the project is read too, since
// the person chose it, and never a link or path the model wrote. A word
// naming no file, or a file that is no image, stays as it is; an image
// that cannot be shown stays as text and the person is told why, and so
// are they when model takes no images (it reads a sentence in their
// place, as of read_file's).
func (p *Reader) WithImages(message, model string) (string, []conversation.Image) {
	found := mentions.ImagePaths(message)
	if len(found) == 0 {
		return message, nil
	}
	var b strings.Builder
	var shown []conversation.Image
	placeholders := map[string]string{}
	last := 0
	for _, w := range found {
		path := p.pastedPath(w.Path)
		ph, ok := placeholders[path]
		if !ok {
			img, why := p.pastedImage(path, len(shown))
			if why != "" {
				p.say(fmt.Sprintf("%s is not attached: %s", filepath.Base(w.Path), why))
			}
			if img == nil {
				placeholders[path] = "" // said once, and left as text
				continue
			}
			shown = append(shown, *img)
			ph = fmt.Sprintf("[Image #%d: %s, %d×%d px]", len(shown), img.Name, img.Width, img.Height)
			placeholders[path] = ph
		}
		if ph == "" {
			continue
		}
		b.WriteString(message[last:w.Start])
		b.WriteString(ph)
		last = w.End
	}
	if len(shown) == 0 {
		return message, nil
	}
	b.WriteString(message[last:])
	if !llm.AcceptsImages(model) {
		names := make([]string, len(shown))
		for i, img := range shown {
			names[i] = img.Name
		}
		p.say(fmt.Sprintf("%s does not accept images: it reads a sentence in place of %s", model, strings.Join(names, ", ")))
	}
	return b.String(), shown
}

// pastedPath is the file a pasted path names.
func (p *Reader) pastedPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, filepath.FromSlash(rest))
		}
	}
	path = filepath.FromSlash(path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Root, p.StartDir, path)
	}
	return filepath.Clean(path)
}

// pastedImage is the image at path as the model is shown it, the
// (n+1)th of its prompt, or nil; why says what kept an image from being
// shown, "" when the path names no file or no image, which stays text.
func (p *Reader) pastedImage(path string, n int) (*conversation.Image, string) {
	// The session's door judges a picture as any file a request holds: one
	// of the person's secrets, or a file a Read deny rule names, is not
	// shown, whoever named it.
	real, rerr := filepath.EvalSymlinks(path)
	if rerr != nil {
		real = path
	}
	if err := p.Door.Refuses(path, real); err != nil {
		if _, serr := os.Stat(path); serr != nil {
			return nil, ""
		}
		return nil, RefusalWords(err)
	}
	prep, err := images.ReadFile(rootfs.Person(), path)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, images.ErrNotImage):
		return nil, ""
	case errors.Is(err, images.ErrNotRegular):
		return nil, "it is not a regular file"
	case err != nil:
		return nil, err.Error()
	case n == MaxPromptImages:
		return nil, "one message shows the model at most " + text.Counted(MaxPromptImages, "image", "images")
	}
	name := text.StripControls(filepath.Base(path))
	img := conversation.NewImage(name, prep.MediaType, prep.Data, prep.Width, prep.Height)
	return &img, ""
}

// say tells the person one line, when there is someone to tell.
func (p *Reader) say(line string) {
	if p.Notify != nil {
		p.Notify(text.StripControls(line))
	}
}
