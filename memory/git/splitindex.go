package git

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// A checkpoint index is split (see splitIndex): its shared part is a file
// of the git directory, sharedindex.<hash>, which git keeps while it is
// read and deletes two weeks after. Ralph deletes the one of a session it
// removes itself, and an index whose shared part is gone is seeded again.

// errBadIndex says an index file is not one ralph can read.
var errBadIndex = errors.New("not a git index file ralph can read")

// sharedIndexOf returns the file name (sharedindex.<hash>) of the shared
// index that a SHA-1 index file's link extension names, "" when the index
// is not split. Index versions 2, 3 and 4 are read.
func sharedIndexOf(data []byte) (string, error) {
	const hashLen = 20
	if len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return "", errBadIndex
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return "", errBadIndex
	}
	count := binary.BigEndian.Uint32(data[8:12])
	end := len(data) - hashLen // the trailing checksum
	off := 12
	for range count {
		// 40 bytes of stat data, the object name and 2 bytes of flags;
		// version 3 and later add 2 more when the extended flag is set.
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return "", errBadIndex
		}
		if version >= 3 && binary.BigEndian.Uint16(data[off+fixed-2:])&0x4000 != 0 {
			fixed += 2
		}
		name := off + fixed
		if version == 4 {
			// The name is a varint (how much of the previous name to
			// drop) and the rest, NUL-terminated, without padding.
			for name < end && data[name]&0x80 != 0 {
				name++
			}
			name++
		}
		if name > end {
			return "", errBadIndex
		}
		nul := bytes.IndexByte(data[name:end], 0)
		if nul < 0 {
			return "", errBadIndex
		}
		if version == 4 {
			off = name + nul + 1
		} else {
			// Versions 2 and 3 pad each entry with 1 to 8 NULs to a
			// multiple of 8 bytes.
			off += (fixed + nul + 8) &^ 7
		}
	}
	for off+8 <= end {
		sig, size := string(data[off:off+4]), int(binary.BigEndian.Uint32(data[off+4:off+8]))
		body := off + 8
		if size < 0 || body+size > end {
			return "", errBadIndex
		}
		if sig == "link" {
			if size < hashLen {
				return "", errBadIndex
			}
			return "sharedindex." + hex.EncodeToString(data[body:body+hashLen]), nil
		}
		off = body + size
	}
	return "", nil
}

// indexLinks returns the shared index the index file name of dir links
// to, "" when it does not exist, is not split or cannot be read (a link,
// a pipe: see gitdoor.go).
func indexLinks(dir, file string) string {
	data, err := readAdmin(dir, file)
	if err != nil {
		return ""
	}
	name, err := sharedIndexOf(data)
	if err != nil {
		return ""
	}
	return name
}

// repairIndex removes ralph's index when the shared part it links to is
// gone (git expired it, or a pruned session's deletion took it), so that
// the next checkpoint seeds it again; it reports whether it did.
func (c *Checkpoints) repairIndex() bool {
	name := indexLinks(filepath.Split(c.index))
	if name == "" {
		return false
	}
	if _, err := os.Stat(filepath.Join(c.repo.GitDir, name)); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	return c.own.Remove(c.index) == nil
}

// forgetIndex deletes the shared part of a session's checkpoint index
// before the session's directory goes, unless the person's own index or
// another session's (a sibling directory's file of the same name) links
// to it too.
func (r *Repo) forgetIndex(index string) error {
	name := indexLinks(filepath.Split(index))
	if name == "" {
		return nil
	}
	if indexLinks(r.GitDir, "index") == name {
		return nil
	}
	others, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(index)), "*", filepath.Base(index)))
	for _, other := range others {
		if other != index && indexLinks(filepath.Split(other)) == name {
			return nil
		}
	}
	// The shared part is removed through the git dir's door: no link on
	// the way is followed.
	door, err := rootfs.New(r.GitDir)
	if err == nil {
		err = door.Remove(filepath.Join(door.Dir(), name))
		_ = door.Close()
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete the shared part of the checkpoint index: %w", err)
	}
	return nil
}

// writing is args for a git command that writes ralph's index, with
// that index split when it is large: only the entries that changed since
// its shared part (sharedindex.<hash> in the git directory) was written
// are written again. In a tree of 10,000 files the whole index is 800 KB,
// and the status, the add and the write-tree each wrote it in full, about
// 5 ms each; split, each write takes a tenth of a millisecond.
func (c *Checkpoints) writing(args ...string) []string {
	if !c.split {
		return args
	}
	return append([]string{"-c", "core.splitIndex=true"}, args...)
}

// splitMinEntries is the size from which ralph's index is split. A small
// index costs little to write whole, and split it would not stay: git
// writes a new shared part whenever a fifth of the entries changed
// (splitIndex.maxPercentChange), leaving the old one in the git
// directory for two weeks. A variable, so that tests can split small
// indexes.
var splitMinEntries uint32 = 4096

// decideSplit sets whether this checkpoint's commands split ralph's
// index: only in the plain layout, whose index files repairIndex and
// forgetIndex can read, and only for an index of splitMinEntries or more.
// An index split before stays split (git keeps it as it is when
// core.splitIndex is not given).
func (c *Checkpoints) decideSplit() {
	c.split = false
	if c.store == nil {
		return
	}
	f, err := openAdmin(filepath.Split(c.index))
	if err != nil {
		return
	}
	defer f.Close()
	var head [12]byte
	if _, err := io.ReadFull(f, head[:]); err == nil && string(head[:4]) == "DIRC" {
		c.split = binary.BigEndian.Uint32(head[8:]) >= splitMinEntries
	}
}
