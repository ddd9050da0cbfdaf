package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// ClientFiles is the client's file system (fs/read_text_file and
// fs/write_text_file) as ralph's file tools see it (workers.EditorFiles):
// the editor's buffers, unsaved changes included, are what the model
// reads and edits. The guards (links, protected and kept paths, the
// redaction door, the nested guard) are the workers' seam's, applied
// before any request reaches this; this only speaks the protocol.
type ClientFiles struct {
	conn        *sdk.AgentSideConnection
	session     string
	read, write bool
}

// ErrNoClientFS says the client does not offer the method asked of it.
var ErrNoClientFS = errors.New("the editor does not offer this file method")

// Offers says which methods the client offers (workers.EditorOffers):
// the file tools use the disk for the other.
func (f *ClientFiles) Offers(write bool) bool {
	if write {
		return f.write
	}
	return f.read
}

// ReadTextFile asks the client for a file's text.
func (f *ClientFiles) ReadTextFile(ctx context.Context, abs string) (string, error) {
	if !f.read {
		return "", ErrNoClientFS
	}
	resp, err := f.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(f.session), Path: abs})
	if err != nil {
		if saysNoFile(err) {
			return "", fmt.Errorf("%w: %w", errNoFile, err)
		}
		return "", fmt.Errorf("the editor could not read %s: %w", abs, err)
	}
	return resp.Content, nil
}

// WriteTextFile asks the client to write a file's text.
func (f *ClientFiles) WriteTextFile(ctx context.Context, abs, content string) error {
	if !f.write {
		return ErrNoClientFS
	}
	if _, err := f.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(f.session), Path: abs, Content: content}); err != nil {
		return fmt.Errorf("the editor could not write %s: %w", abs, err)
	}
	return nil
}

// saysNoFile reports whether a client's error says the file does not
// exist: the protocol has no code for it, so its words are read (Zed's
// "not found", Node's ENOENT, the npm SDK's "Resource not found").
func saysNoFile(err error) bool {
	var re *sdk.RequestError
	if errors.As(err, &re) && re.Code == -32002 {
		return true
	}
	s := strings.ToLower(err.Error())
	if errors.As(err, &re) && re.Data != nil {
		s += " " + strings.ToLower(fmt.Sprint(re.Data))
	}
	for _, w := range []string{"not found", "no such file", "enoent", "does not exist", "not exist"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
