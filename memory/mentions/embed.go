package mentions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/ralph-dev/ralph/memory/text"
)

// Bounds of what one message attaches: files, each file, and all of them.
const (
	MaxFiles = 10
	MaxFile  = 256 << 10
	MaxTotal = 512 << 10
)

// Embed is message with the text of the files it names as @path added
// after it, each once, in a fence: a chat line, a one-shot's prompt, a
// custom command's text, as Claude Code attaches them. A path is relative
// to base (the directory the person is in, or the project root) and read
// through fsys, the project's door: a path outside the project or a link
// out of it attaches nothing, nor does a directory, a binary file, a
// file over MaxFile or past MaxTotal; say is told so in one line each,
// and of a path-like name that is no file (a bare "@someone" is not
// said). The message itself is kept as written.
func Embed(fsys afero.Fs, base, message string, say func(string)) string {
	var b strings.Builder
	total, files := 0, 0
	for _, m := range Find(message) {
		data, why := read(fsys, base, m)
		switch {
		case why != "":
		case files == MaxFiles:
			why = fmt.Sprintf("one message attaches at most %d files", MaxFiles)
		case total+len(data) > MaxTotal:
			why = fmt.Sprintf("the files of one message are bounded at %d KiB", MaxTotal>>10)
		}
		if why != "" {
			if say != nil && (why != whyMissing || strings.ContainsAny(m, "./")) {
				say(fmt.Sprintf("@%s is not attached: %s", text.StripControls(m), why))
			}
			continue
		}
		total += len(data)
		files++
		fmt.Fprintf(&b, "\n\nThe file @%s:\n%s", m, strings.TrimRight(text.Fenced(string(data)), "\n"))
	}
	return message + b.String()
}

const whyMissing = "no such file"

// read is the text of the file m names, or why it is not attached.
func read(fsys afero.Fs, base, m string) (data []byte, why string) {
	if strings.HasPrefix(m, "~/") {
		return nil, "it is outside the project"
	}
	path := filepath.FromSlash(m)
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}
	path = filepath.Clean(path)
	if r, ok := fsys.(*rootfs.Fs); ok && !r.Contains(path) {
		return nil, "it is outside the project"
	}
	data, err := rootfs.ReadSmall(fsys, path, MaxFile)
	var tl *rootfs.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Sprintf("it is %d KiB, over the %d KiB a message attaches of one file", tl.Size>>10, MaxFile>>10)
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return nil, "it is outside the project or a link out of it"
	case errors.Is(err, rootfs.ErrNotRegular):
		return nil, "it is not a regular file (a directory?)"
	case errors.Is(err, fs.ErrNotExist):
		return nil, whyMissing
	case err != nil:
		return nil, err.Error()
	case bytes.IndexByte(data, 0) >= 0:
		return nil, "it is a binary file"
	}
	return data, ""
}
