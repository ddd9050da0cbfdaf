package git

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A Git LFS file is stored in git as a pointer, a few lines naming the
// SHA-256 and size of its content, and its content lies in
// .git/lfs/objects, which git-lfs's smudge filter copies into the work
// tree without checking it against that name. A command of the model's
// may write there as it may write .git/objects: undo would then put back
// the model's bytes as your file (a swapped object), or remove your file
// and fail (a deleted one, which was your uncommitted work's only copy).
// So before undo writes a file through git's filters, every pointer among
// the blobs is followed to its object, read through the git directory's
// door (no link on the way), and the object checked against the pointer's
// SHA-256 and size; one missing or changed fails the undo before anything
// is written.

// maxPointer is the largest blob taken for a Git LFS pointer: git-lfs
// writes them in about 130 bytes and reads none over 1,024.
const maxPointer = 1024

// lfsPointer is a pointer's object: its SHA-256 in hex, and its size.
type lfsPointer struct {
	oid  string
	size int64
}

// parsePointer reads a Git LFS pointer ("version …", "oid sha256:<64
// hex>", "size <n>", each on its line); false for any other blob.
func parsePointer(data []byte) (lfsPointer, bool) {
	if len(data) > maxPointer || !bytes.HasPrefix(data, []byte("version ")) {
		return lfsPointer{}, false
	}
	var p lfsPointer
	haveSize := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, _ := bytes.Cut(sc.Bytes(), []byte(" "))
		switch string(key) {
		case "oid":
			hexOid, ok := bytes.CutPrefix(val, []byte("sha256:"))
			if !ok || len(hexOid) != 64 {
				return lfsPointer{}, false
			}
			if _, err := hex.DecodeString(string(hexOid)); err != nil {
				return lfsPointer{}, false
			}
			p.oid = string(hexOid)
		case "size":
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil || n < 0 {
				return lfsPointer{}, false
			}
			p.size, haveSize = n, true
		}
	}
	return p, p.oid != "" && haveSize
}

// checkLFSObjects checks the Git LFS object of every pointer among the
// blobs of paths (pointers, by path, as the check pass read them), and
// fails with ErrObjectChanged, naming the path, when one is missing, is
// no regular file reached without a link, or does not hash to its
// pointer's name and size.
func (r *Repo) checkLFSObjects(ctx context.Context, paths []string, pointers map[string]lfsPointer) error {
	if len(pointers) == 0 {
		return nil
	}
	// git-lfs writes its temporary files under it as it smudges: a link
	// planted since the last checkpoint is set aside first (gitdoor.go).
	if err := asideLFS(r.common()); err != nil && !errors.Is(err, errLFSSetAside) {
		return fmt.Errorf("restore: %w", err)
	}
	// Without an lfs directory (a link there counts as one) git-lfs has
	// no object of its own to copy: it fetches from the repository's
	// LFS server, and checks what it fetches against the pointer; and a
	// repository that keeps pointers as plain files has none either.
	storage := r.lfsStorage(ctx)
	if _, err := os.Lstat(storage); err != nil {
		return nil
	}
	for _, p := range paths {
		ptr, ok := pointers[p]
		if !ok {
			continue
		}
		if err := checkLFSObject(storage, ptr); err != nil {
			return fmt.Errorf("restore: %s (Git LFS object %s): %w: %w; nothing was restored", p, ptr.oid, ErrObjectChanged, err)
		}
	}
	return nil
}

// errLFSContent says an LFS object's bytes are not those its pointer
// names.
var errLFSContent = errors.New("its bytes do not hash to the pointer's SHA-256 and size")

// lfsStorage is where git-lfs keeps its objects here: lfs.storage when
// configured (relative to the common git directory, as git-lfs takes
// it), else the common git directory's lfs. Whoever set it, an object is
// taken only when it hashes to its pointer's name.
func (r *Repo) lfsStorage(ctx context.Context) string {
	dir := filepath.Join(r.common(), "lfs")
	for _, v := range r.configValues(ctx, "lfs.storage") {
		if v = strings.TrimSpace(v); v != "" {
			dir = v
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(r.common(), dir)
			}
		}
	}
	return dir
}

// checkLFSObject reads the object of ptr from storage's objects through
// a door rooted there (no link on the way) and checks it.
func checkLFSObject(storage string, ptr lfsPointer) error {
	f, err := openAdmin(storage, filepath.Join("objects", ptr.oid[:2], ptr.oid[2:4], ptr.oid))
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, ptr.size+1))
	if err != nil {
		return err
	}
	if n != ptr.size || hex.EncodeToString(h.Sum(nil)) != ptr.oid {
		return errLFSContent
	}
	return nil
}
