package acp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/images"
)

// ErrPrompt says a prompt's content cannot be given to the model.
var ErrPrompt = errors.New("the prompt cannot be sent")

// message is a prompt's content blocks as one message for the model, as
// chat makes a typed line one: text with its @file mentions and pasted
// image paths attached, embedded resources attached as an @file is,
// resource links attached through the project's door as @path, images
// through ralph's image checks.
func (ss *session) message(blocks []sdk.ContentBlock) (string, []conversation.Image, error) {
	var b strings.Builder
	var shown []conversation.Image
	var attached strings.Builder
	for _, bl := range blocks {
		switch {
		case bl.Text != nil:
			b.WriteString(bl.Text.Text)
		case bl.Image != nil:
			img, err := ss.image(bl.Image, len(shown))
			if err != nil {
				return "", nil, err
			}
			shown = append(shown, img)
			fmt.Fprintf(&b, "[Image #%d: %s, %d×%d px]", len(shown), img.Name, img.Width, img.Height)
		case bl.Resource != nil:
			r := bl.Resource.Resource.TextResourceContents
			if r == nil {
				return "", nil, fmt.Errorf("%w: an embedded binary resource is not supported; attach text", ErrPrompt)
			}
			name := ss.shownName(r.Uri)
			fmt.Fprintf(&attached, "\n\nThe file @%s:\n%s", name, strings.TrimRight(text.Fenced(r.Text), "\n"))
		case bl.ResourceLink != nil:
			s, err := ss.linked(bl.ResourceLink.Uri)
			if err != nil {
				return "", nil, err
			}
			attached.WriteString(s)
		case bl.Audio != nil:
			return "", nil, fmt.Errorf("%w: ralph takes no audio", ErrPrompt)
		}
	}
	msg := b.String()
	coord := ss.at.Coord
	msg, pasted := ss.p.WithImages(msg, coord.ModelName())
	shown = append(shown, pasted...)
	msg = ss.p.WithMentions(msg)
	return msg + attached.String(), shown, nil
}

// image is a prompt's image, checked and scaled as a pasted one is.
func (ss *session) image(im *sdk.ContentBlockImage, n int) (conversation.Image, error) {
	data, err := base64.StdEncoding.DecodeString(im.Data)
	if err != nil {
		return conversation.Image{}, fmt.Errorf("%w: an image is not base64: %w", ErrPrompt, err)
	}
	if n >= maxImages {
		return conversation.Image{}, fmt.Errorf("%w: one message shows the model at most %s", ErrPrompt, text.Counted(maxImages, "image", "images"))
	}
	mt := images.Sniff(data)
	if mt == "" {
		return conversation.Image{}, fmt.Errorf("%w: an image of type %q is not one ralph reads (PNG, JPEG, GIF, WebP)", ErrPrompt, im.MimeType)
	}
	prep, err := images.Prepare(data, mt)
	if err != nil {
		return conversation.Image{}, fmt.Errorf("%w: %w", ErrPrompt, err)
	}
	name := "image"
	if im.Uri != nil {
		name = filepath.Base(*im.Uri)
	}
	return conversation.NewImage(text.StripControls(name), prep.MediaType, prep.Data, prep.Width, prep.Height), nil
}

// maxImages bounds the images of one prompt, as a chat line's.
const maxImages = 10

// uriPath is the file path a resource's URI names ("" for none).
func uriPath(uri string) string {
	if filepath.IsAbs(uri) {
		return uri
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return u.Path
}

// shownName is a resource's name in the message: its path in the
// project, else its URI.
func (ss *session) shownName(uri string) string {
	if p := uriPath(uri); p != "" {
		if rel, err := filepath.Rel(ss.p.Root, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return text.StripControls(uri)
}

// linked attaches the file a resource link names, through the project's
// door as an @path is: a path outside the project is refused.
func (ss *session) linked(uri string) (string, error) {
	p := uriPath(uri)
	if p == "" {
		return "", fmt.Errorf("%w: %s is not a file in the project", ErrPrompt, text.StripControls(uri))
	}
	base := filepath.Join(ss.p.Root, ss.p.StartDir)
	rel, err := filepath.Rel(base, filepath.Clean(p))
	if err != nil || strings.Contains(rel, " ") {
		return "", fmt.Errorf("%w: %s cannot be attached", ErrPrompt, text.StripControls(p))
	}
	if inRoot, err := filepath.Rel(ss.p.Root, filepath.Clean(p)); err != nil || inRoot == ".." || strings.HasPrefix(inRoot, "../") {
		return "", fmt.Errorf("%w: %s is outside the project", ErrPrompt, text.StripControls(p))
	}
	mention := "@" + filepath.ToSlash(rel)
	return strings.TrimPrefix(ss.p.WithMentions(mention), mention), nil
}
