package llm

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/providers"
	openai "github.com/sashabaranov/go-openai"
)

// Images (a read_file of a picture) are kept in the conversation by
// reference (conversation.Image); this is where they become what the
// wire carries. A model that accepts images gets each as an image part of
// its protocol: on the Messages API an image block inside the tool's
// tool_result; on chat completions, whose tool messages carry text only,
// a user message of image_url parts (data: URLs) right after the turn's
// tool results. Any other model gets one sentence in the image's place.

// AcceptsImages reports whether the model takes image parts, by its name
// without any provider prefix ("openai/gpt-4o", "ollama/llava"), as the
// provider table's list of models has it (memory/providers).
func AcceptsImages(model string) bool { return providers.AcceptsImages(model) }

// NoImagesSentence is what a model that accepts no images reads in the
// place of one.
func NoImagesSentence(name string) string {
	return fmt.Sprintf("[this model does not accept images, so %s was not shown to it; "+
		"ask the person what it shows if you need to know, or read it another way]", name)
}

// shownImages is msgs with their images as the model can take them: kept
// for a model that accepts images, each with its bytes; otherwise
// replaced by a sentence in the message's text. An image whose bytes are
// gone (a resumed session whose file was removed) is a sentence too. The
// history itself is never changed: a message that changes is a copy.
func shownImages(msgs []conversation.Message, accepts bool) []conversation.Message {
	var out []conversation.Message
	for i, m := range msgs {
		if len(m.Images) == 0 {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append(make([]conversation.Message, 0, len(msgs)), msgs[:i]...)
		}
		var kept []conversation.Image
		notes := []string{m.Content}
		for _, img := range m.Images {
			switch {
			case !accepts:
				notes = append(notes, NoImagesSentence(img.Name))
			case img.Data == nil:
				notes = append(notes, fmt.Sprintf("[the image %s is no longer kept in this session, so it could not be shown; read it again]", img.Name))
			default:
				kept = append(kept, img)
			}
		}
		m.Images = kept
		m.Content = strings.TrimLeft(strings.Join(notes, "\n"), "\n")
		out = append(out, m)
	}
	if out == nil {
		return msgs
	}
	return out
}

// dataURL is an image as a data: URL, the form chat completions' image_url
// part takes it in.
func dataURL(img conversation.Image) string {
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// openAIImageParts are the images of a chat-completions conversation's
// tool results, as the parts of the user message that follows them:
// a line naming each, then the image.
func openAIImageParts(m conversation.Message) []openai.ChatMessagePart {
	var parts []openai.ChatMessagePart
	for _, img := range m.Images {
		parts = append(parts,
			openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: fmt.Sprintf("The image %s (from the %s call above):", img.Name, m.Name)},
			openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: dataURL(img)}})
	}
	return parts
}

// imageBlock is an image as the Messages API takes it.
func imageBlock(img conversation.Image) mBlock {
	return mBlock{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}}
}

// imageSource is an image block's source.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// userImageParts is a person's message with its images: its text, then
// each image.
func userImageParts(m conversation.Message) []openai.ChatMessagePart {
	var parts []openai.ChatMessagePart
	if strings.TrimSpace(m.Content) != "" {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
	}
	for _, img := range m.Images {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: dataURL(img)}})
	}
	return parts
}
