//go:build !unix

package git

import "bytes"

// writeData writes a file whose content is in memory (see writeOne); grown
// is a hint only Linux takes (shrink_linux.go).
func (b *beneath) writeData(path, mode string, data []byte, grown bool) error {
	return b.writeOne(path, mode, bytes.NewReader(data), int64(len(data)))
}

// removeFile removes the file rel (see remove).
func (b *beneath) removeFile(rel string) error { return b.remove(rel) }
