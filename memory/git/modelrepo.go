package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A repository that first appeared while ralph ran the model's commands
// (a `git init` in a project that had none, or a `git init sub` inside
// one) is the model's: its hooks and its configuration are files the
// model wrote, and .git/hooks of such a repository is not the person's
// place the way the project's own .git/hooks is. The sandbox's nested
// guard sees the repository appear after the command that made it, and
// a session that opens a project ralph last saw without a repository
// sees it too; either marks the repository here, in ralph's user
// configuration directory, outside the project and out of every
// command's reach. Ralph's own commits (--commit) never run the hooks of
// a marked repository, and say so once, naming the record to delete to
// trust them. The mark holds by the directory's path: a command can copy
// a git directory to a new inode in place, so a new identity at the same
// path ends nothing; the identity is kept for the person reading it.

// modelRepo is the record of one repository the model made.
type modelRepo struct {
	Common string    `json:"common_dir"`        // the git common directory, symbolic links resolved
	ID     string    `json:"file_id,omitempty"` // its device and inode, where known
	Since  time.Time `json:"since"`
	How    string    `json:"how"`
}

// modelRecordPath is where the mark of the common directory common
// (symbolic links resolved) lives, "" without a configuration directory.
func modelRecordPath(common string) string {
	base, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(common))
	return filepath.Join(base, "ralph", "git-trust", "model-"+hex.EncodeToString(sum[:16])+".json")
}

// realDir is dir with symbolic links resolved, and its identity; ok is
// false when it is not a directory.
func realDir(dir string) (real, id string, ok bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", "", false
	}
	return real, fileID(fi), true
}

// ErrOutsideProject says a repository ralph was to mark as the model's
// lies outside the project: a .git file a command wrote can name any
// repository of the person's (`gitdir: ~/victim/.git`), and marking that
// one would have ralph's commits there skip its own hooks (a secret
// scanner's pre-commit).
var ErrOutsideProject = errors.New("lies outside the project: not marked as the model's")

// MarkModelRepository records that the repository whose common git
// directory is common, inside the project at root, is the model's; how
// says what showed it, for the person reading the record. A repository
// marked already keeps its first record. Git trust marks only what lies
// in the project: a common directory outside root is never marked
// (ErrOutsideProject).
func MarkModelRepository(root, common, how string) error {
	real, id, ok := realDir(common)
	if !ok {
		return nil
	}
	if !inside(root, real) {
		return fmt.Errorf("the repository %s %w at %s", real, ErrOutsideProject, root)
	}
	if isModelRepository(real, id) {
		return nil
	}
	if err := writeRecord(modelRecordPath(real), modelRepo{Common: real, ID: id, Since: time.Now().UTC(), How: how}); err != nil {
		return fmt.Errorf("record of a repository the model made: %w", err)
	}
	return nil
}

// isModelRepository reports whether the common directory real (links
// resolved) is marked as the model's, whatever its identity id now.
func isModelRepository(real, id string) bool {
	var rec modelRepo
	if !readRecord(modelRecordPath(real), &rec) || rec.Common != real {
		return false
	}
	return true
}

// modelHooks tells whether the hooks of the repository in dir, whose
// common directory is common, are the model's (see above), and tells
// the person once per repository when a commit of ralph's goes without
// them.
func modelHooks(ctx context.Context, dir, common string) bool {
	real, id, ok := realDir(common)
	if !ok || !isModelRepository(real, id) {
		return false
	}
	if _, told := toldHooks.LoadOrStore(real, true); !told {
		if p := pinFor(dir); p != nil && p.warn != nil {
			p.warn(fmt.Sprintf("ralph's commit ran without the hooks of the repository in %s: it appeared while ralph ran the model's commands, "+
				"so its hooks are the model's files. If they are yours, read %s and delete %s to trust them",
				strings.TrimSuffix(dir, "/"), filepath.Join(real, "hooks"), modelRecordPath(real)))
		}
	}
	return true
}

// inside reports whether the directory real (links resolved) lies in
// the project root, as given or with its links resolved.
func inside(root, real string) bool {
	if root == "" {
		return false
	}
	if within(filepath.Clean(root), real) {
		return true
	}
	r, err := filepath.EvalSymlinks(root)
	return err == nil && within(r, real)
}

// toldHooks holds the repositories whose hooks' absence was told.
var toldHooks sync.Map
