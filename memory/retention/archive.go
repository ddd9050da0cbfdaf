package retention

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// ArchiveDir holds archived sessions, beside the sessions directory.
const ArchiveDir = ".ralph/archive"

// ArchiveResult says where a session went.
type ArchiveResult struct {
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
	Files     int    `json:"files"`
	Bytes     int64  `json:"bytes"`
}

// ArchivePath is where session id's archive goes.
func ArchivePath(root, id string) string {
	return filepath.Join(root, ArchiveDir, id+".tar.gz")
}

// Archive packs session id into ArchiveDir/<id>.tar.gz (its files under
// <id>/, as they were), records a summary of it in the registry, then
// removes the session and its git checkpoint refs as Remove does. The
// archive keeps checkpoints.jsonl, which names the checkpoints' commits.
// Each step is done before the next starts, so a failure leaves the
// session where it was. The running and the latest session are refused
// with ErrProtected.
func Archive(ctx context.Context, fs afero.Fs, root, id string, refs RefPruner, reg *memory.Registry, now time.Time) (ArchiveResult, error) {
	res := ArchiveResult{SessionID: id, Path: ArchivePath(root, id)}
	if why, ok := protectedNow(fs, root, id); ok {
		return res, fmt.Errorf("%w: %s is the %s session; only older sessions are archived", ErrProtected, id, why)
	}
	dir := memory.SessionDir(root, id)
	if fi, err := fs.Stat(dir); err != nil || !fi.IsDir() {
		return res, memory.NoSessionf("no session %s in %s", id, filepath.Join(root, memory.SessionsDir))
	}
	data, files, err := pack(fs, dir, id)
	if err != nil {
		return res, fmt.Errorf("archive %s: %w", id, err)
	}
	res.Files, res.Bytes = files, int64(len(data))
	if err := memory.WriteFileAtomic(fs, res.Path, data, 0o644); err != nil {
		return res, fmt.Errorf("archive %s: %w", id, err)
	}
	if reg != nil {
		if err := reg.AddArchive(summary(fs, root, id, res.Path, now)); err != nil {
			return res, fmt.Errorf("archive %s: the archive is written but the registry could not record it, so the session stays: %w", id, err)
		}
	}
	return res, removeOne(ctx, fs, root, id, refs)
}

// pack is the session directory as a gzipped tar, in memory: a session's
// records are megabytes, and the atomic write needs the whole file.
func pack(fs afero.Fs, dir, id string) ([]byte, int, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files := 0
	err := afero.Walk(fs, dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(id, rel))
		switch {
		case fi.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: fi.ModTime()})
		case !fi.Mode().IsRegular():
			return nil // ralph writes no links or devices; skip what is not its
		}
		f, err := fs.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
			return err
		}
		// A log still growing would not match its header's size: copy
		// exactly what the header promised.
		if _, err := io.CopyN(tw, f, fi.Size()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), files, nil
}

// summary is what the registry keeps of an archived session, from its
// session.json (what is missing there stays empty).
func summary(fs afero.Fs, root, id, path string, now time.Time) memory.ArchivedSession {
	a := memory.ArchivedSession{Root: root, SessionID: id, Archive: path, Status: "unknown", ArchivedAt: now.UTC()}
	if abs, err := filepath.Abs(root); err == nil {
		a.Root = abs
	}
	if st, err := memory.LoadSessionState(fs, root, id); err == nil {
		a.Status, a.Mode, a.Model, a.Iterations, a.Turns = st.Status, st.Mode, st.Model, st.Iteration, st.Turns
		a.Usage, a.CostUSD, a.Tasks, a.StartedAt, a.EndedAt = st.Usage, st.CostUSD, st.Tasks, st.StartedAt, st.EndedAt
	}
	return a
}
