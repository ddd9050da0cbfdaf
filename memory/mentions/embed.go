package mentions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/kept"
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
// through fsys, the project's door, and the session's door (memory/kept):
// a path outside the project or a link out of it attaches nothing, nor
// does a file the door refuses (the person's secrets, a file a Read deny
// rule names), a directory, a binary file, a file over MaxFile or past
// MaxTotal; say is told so in one line each, and of a path-like name that
// is no file (a bare "@someone" is not said). A repository's
// configuration is attached masked, followed by the sentence that says
// so. The message itself is kept as written.
func Embed(door *kept.Door, fsys afero.Fs, base, message string, say func(string)) string {
	var b strings.Builder
	total, files := 0, 0
	for _, m := range Find(message) {
		txt, why := read(door, fsys, base, m)
		data := txt.Data
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
		if txt.Masked {
			b.WriteString("\n" + kept.MaskedNote(m))
		}
	}
	return message + b.String()
}

const whyMissing = "no such file"

// read is the text of the file m names, or why it is not attached.
func read(door *kept.Door, fsys afero.Fs, base, m string) (txt kept.Text, why string) {
	if strings.HasPrefix(m, "~/") {
		return txt, "it is outside the project"
	}
	path := filepath.FromSlash(m)
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}
	path = filepath.Clean(path)
	if r, ok := fsys.(*rootfs.Fs); ok && !r.Contains(path) {
		return txt, "it is outside the project"
	}
	txt, err := door.ReadSmall(fsys, path, MaxFile)
	var tl *rootfs.TooLargeError
	var de *kept.DeniedError
	switch {
	case errors.As(err, &de):
		return txt, de.Rule.Origin + " refuses reading it"
	case errors.Is(err, kept.ErrKept):
		return txt, "it is kept from the model: " + kept.ErrKept.Error()
	case errors.As(err, &tl):
		return txt, fmt.Sprintf("it is %d KiB, over the %d KiB a message attaches of one file", tl.Size>>10, MaxFile>>10)
	case errors.Is(err, rootfs.ErrLinkOut), errors.Is(err, rootfs.ErrOutsideRoot):
		return txt, "it is outside the project or a link out of it"
	case errors.Is(err, rootfs.ErrNotRegular):
		return txt, "it is not a regular file (a directory?)"
	case errors.Is(err, fs.ErrNotExist):
		return txt, whyMissing
	case err != nil:
		return txt, err.Error()
	case bytes.IndexByte(txt.Data, 0) >= 0:
		return kept.Text{}, "it is a binary file"
	}
	return txt, ""
}
