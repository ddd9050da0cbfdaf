package project

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// MaxAttachment is the most of one file an @path in a message attaches,
// and MaxAttachments of all the files one message attaches.
const (
	MaxAttachment  = 256 << 10
	MaxAttachments = 512 << 10
)

// WithMentions is a message (a chat line, a one-shot's prompt) with the
// contents of the files it names as @path attached after it, as Claude
// Code attaches them: relative to the directory the person started in,
// read through the project's door, so nothing outside the project (nor
// a link out of it) is attached. A name that is no file of the project,
// a directory, a binary file or one over MaxAttachment is not attached,
// and the person is told in one line; the message itself goes as typed.
func (p *Project) WithMentions(message string) string {
	var b strings.Builder
	total := 0
	for _, m := range mentions(message) {
		data, shown, why := p.attachment(m)
		if why == "" && total+len(data) > MaxAttachments {
			why = fmt.Sprintf("the files of one message are bounded at %d KiB", MaxAttachments>>10)
		}
		if why != "" {
			if p.notify != nil && (strings.ContainsAny(m, "./") || why != "no such file") {
				p.notify(fmt.Sprintf("@%s was not attached: %s", m, why))
			}
			continue
		}
		total += len(data)
		fmt.Fprintf(&b, "\n\n<attached-file path=%q>\n%s\n</attached-file>", shown, strings.TrimRight(string(data), "\n"))
	}
	if b.Len() == 0 {
		return message
	}
	return message + "\n\n[ralph: the files the message names with @, attached as they are now]" + b.String()
}

// attachment reads the file an @path names, or says why it is not
// attached.
func (p *Project) attachment(m string) (data []byte, shown, why string) {
	if strings.HasPrefix(m, "~/") {
		return nil, "", "it is outside the project"
	}
	abs := m
	if !filepath.IsAbs(m) {
		abs = filepath.Join(p.Root, p.StartDir, m)
	}
	abs = filepath.Clean(abs)
	if r, ok := p.Fs.(*rootfs.Fs); ok && !r.Contains(abs) {
		return nil, "", "it is outside the project"
	}
	data, err := rootfs.ReadSmall(p.Fs, abs, MaxAttachment)
	var tl *rootfs.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, "", fmt.Sprintf("it is %d KiB, over the %d KiB a message attaches of one file", tl.Size>>10, MaxAttachment>>10)
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return nil, "", "it is a link out of the project"
	case errors.Is(err, rootfs.ErrNotRegular):
		return nil, "", "it is not a regular file (a directory?)"
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", "no such file"
	case err != nil:
		return nil, "", err.Error()
	case bytes.IndexByte(data, 0) >= 0:
		return nil, "", "it is a binary file"
	}
	return data, p.shownPath(abs, m), ""
}
