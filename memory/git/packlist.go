package git

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// packByList is the pack beside the checkpoints without git repack: the
// same geometric roll-up (repack -d -l --geometric=2), with pack-objects
// handed the names of the objects to pack.
//
// git repack --geometric gives pack-objects the packs to roll up
// (--stdin-packs), and pack-objects then walks every commit in them and
// every tree those commits name, to find each object's path for its
// search of deltas. A checkpoint's root tree holds every file at the top
// of the work tree, so at 10,000 files each walk parsed some 400 KB a
// commit: a roll-up of 500 tasks' packs spent 0.30 of its 0.41 s there,
// and the roll-ups were most of what a task late in a long run cost more
// than an early one (issue 94). Named from the packs' indexes instead,
// the same roll-up took 24 ms. Objects already stored as deltas keep
// them (pack-objects reuses a delta whose base it packs too); the loose
// ones, without their paths, are sorted by kind and size for the search,
// which puts a root tree beside the one before it.
//
// It packs what repack would: the loose objects of the repository's own
// object directory, and its packs that break the geometric progression
// (by their count of objects, as git 2.39 weighs them). A pack with a
// .keep (the person's, or a fetch's in flight), a promisor or cruft pack
// is never rolled up, as repack leaves them. It then removes the packs
// rolled up and the loose objects packed, once the new pack's index is
// there and names each of them: a pack-objects that failed or was
// stopped removes nothing. It does not write the dumb transports'
// catalogues (repack's update-server-info, which listed every ref, ten
// thousand of ralph's at the end of a long run, at each pack: repack -n).
//
// ok is false where the repository is not one it packs this way (a
// multi-pack-index, which names the packs it would remove, or an index
// of a format it does not read): repack packs it.
//
// Like repack, it packs an object as git reads it, and git reads a pack
// before a loose object: a pack planted in the pack directory that holds
// other content under a loose object's name (an index a command forged)
// has that content packed, and the loose object removed. A command that
// can write there can remove the object itself, and repack -d does the
// same (docs/sandbox.md).
func (c *Checkpoints) packByList(ctx context.Context, common string, set packSettings) (ok bool, err error) {
	if _, err := os.Lstat(filepath.Join(common, "objects", "pack", "multi-pack-index")); !errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	packs, ok := localPacks(common)
	if !ok {
		return false, nil
	}
	rolled := packs[:geometricSplit(packs)]
	var names uint64
	for _, p := range rolled {
		names += uint64(p.count)
	}
	if names > maxRolledNames {
		return false, nil
	}
	loose := looseObjects(common)
	if len(loose) == 0 && len(rolled) < 2 {
		return true, nil
	}
	want := []objectIDs{loose}
	for _, p := range rolled {
		ids, err := idxNames(common, p.name)
		if err != nil {
			return true, fmt.Errorf("pack-objects: %w", err)
		}
		want = append(want, ids)
	}
	written, err := c.packObjects(ctx, common, set, &namesReader{lists: want})
	if err != nil {
		return true, err
	}
	if err := packsHold(common, written, want); err != nil {
		return true, fmt.Errorf("pack-objects: %w", err)
	}
	// A pack written with the name of one rolled up is that pack (a
	// pack's name is its content's hash): it stays.
	rolled = slices.DeleteFunc(slices.Clone(rolled), func(p packFile) bool { return slices.Contains(written, p.name) })
	removePacked(common, rolled, loose)
	return true, nil
}

// maxRolledNames bounds the names packByList holds of the packs it rolls
// up (20 bytes each): a roll-up of more, a person's own large packs (or
// an index a command planted that claims billions of objects), is git
// repack's, which maps the indexes rather than reading them.
const maxRolledNames = 4 << 20

// objectIDs is a list of object names, 20 bytes each, end to end, in
// order: what a pack index holds, and how a roll-up of a person's large
// packs keeps a million names in 20 MB.
type objectIDs []byte

func (ids objectIDs) len() int        { return len(ids) / 20 }
func (ids objectIDs) at(i int) []byte { return ids[i*20 : i*20+20] }

// has reports whether the sorted ids hold id.
func (ids objectIDs) has(id []byte) bool {
	i := sort.Search(ids.len(), func(i int) bool { return bytes.Compare(ids.at(i), id) >= 0 })
	return i < ids.len() && bytes.Equal(ids.at(i), id)
}

// namesReader gives pack-objects the names of lists, a line each.
type namesReader struct {
	lists []objectIDs
	list  int // the list being read
	next  int // its next name
	buf   [41]byte
	line  []byte // what is left of the line being read, in buf
}

func (r *namesReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.line) == 0 {
			for r.list < len(r.lists) && r.next >= r.lists[r.list].len() {
				r.list, r.next = r.list+1, 0
			}
			if r.list == len(r.lists) {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			hex.Encode(r.buf[:40], r.lists[r.list].at(r.next))
			r.buf[40] = '\n'
			r.line = r.buf[:]
			r.next++
		}
		k := copy(p[n:], r.line)
		n += k
		r.line = r.line[k:]
	}
	return n, nil
}

// packObjectsArgs is git's command line of packByList's pack-objects:
// repack's own options of the search (packOptions), deltas by offset, as
// repack asks, and the new pack's name under the pack directory.
func packObjectsArgs(set packSettings, packDir string) []string {
	return slices.Concat(packOptions(set), []string{"pack-objects", "-q", "--delta-base-offset", "--non-empty", filepath.Join(packDir, "pack")})
}

// packObjects runs pack-objects over the objects named in names, as
// repack runs it (stopped with ctx, its temporary files removed), and
// returns the names of the packs it wrote.
func (c *Checkpoints) packObjects(ctx context.Context, common string, set packSettings, names io.Reader) ([]string, error) {
	packDir := filepath.Join(common, "objects", "pack")
	cmd := build(ctx, c.repo.Top, nil, false, false, packObjectsArgs(set, packDir))
	cmd.Stdin = names
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := c.runPack(ctx, cmd, common); err != nil {
		return nil, fmt.Errorf("pack-objects: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var written []string
	for line := range strings.Lines(out.String()) {
		if h := strings.TrimSpace(line); isObjectName(h) {
			written = append(written, "pack-"+h)
		}
	}
	return written, nil
}

// packFile is one pack of the pack directory: its name without the
// extension (pack-<hash>) and its count of objects.
type packFile struct {
	name  string
	count uint32
}

// localPacks lists the packs of the repository's own object directory
// that a roll-up may take, fewest objects first; ok is false when an
// index is not git's version 2, which packByList leaves to repack.
func localPacks(common string) (packs []packFile, ok bool) {
	entries, err := os.ReadDir(filepath.Join(common, "objects", "pack"))
	if err != nil {
		return nil, true
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
	}
	for _, e := range entries {
		base, isIdx := strings.CutSuffix(e.Name(), ".idx")
		if !isIdx || !strings.HasPrefix(base, "pack-") || !have[base+".pack"] ||
			have[base+".keep"] || have[base+".promisor"] || have[base+".mtimes"] {
			continue
		}
		n, err := idxCount(common, base)
		if errors.Is(err, errIdxFormat) {
			return nil, false
		}
		if err != nil {
			continue // the pack went meanwhile, or cannot be read: left
		}
		packs = append(packs, packFile{name: base, count: n})
	}
	slices.SortFunc(packs, func(a, b packFile) int { return cmp.Or(cmp.Compare(a.count, b.count), cmp.Compare(a.name, b.name)) })
	return packs, true
}

// geometricSplit is how many of packs (fewest objects first) a roll-up
// takes, as git repack --geometric=2 splits them (split_pack_geometry):
// the packs before the largest ones that already grow by half each, and
// then as many of those as the new pack would outgrow by half.
func geometricSplit(packs []packFile) int {
	const factor = 2
	if len(packs) == 0 {
		return 0
	}
	i := len(packs) - 1
	for ; i > 0; i-- {
		if uint64(packs[i].count) < factor*uint64(packs[i-1].count) {
			break
		}
	}
	split := i
	if split > 0 {
		split++ // the upper one of the pair that broke it is rolled up too
	}
	var total uint64
	for _, p := range packs[:split] {
		total += uint64(p.count)
	}
	for _, p := range packs[split:] {
		if uint64(p.count) >= factor*total {
			break
		}
		split++
		total += uint64(p.count)
	}
	return split
}

// looseObjects lists the loose objects of the repository's own object
// directory, sorted.
func looseObjects(common string) objectIDs {
	var ids objectIDs
	objects := filepath.Join(common, "objects")
	for i := range 256 {
		dir := fmt.Sprintf("%02x", i)
		entries, err := os.ReadDir(filepath.Join(objects, dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if len(e.Name()) != 38 || !e.Type().IsRegular() || !isObjectName(dir+e.Name()) {
				continue
			}
			ids, _ = hex.AppendDecode(ids, []byte(dir+e.Name()))
		}
	}
	return ids
}

// errIdxFormat says a pack index is not git's version 2 of SHA-1 names.
var errIdxFormat = errors.New("not a version 2 pack index")

// idxHeader is the start of a version 2 pack index: its magic number and
// version, then the fan-out table, whose last entry is the count of
// objects.
const idxHeader = 8 + 256*4

// idxMagic is a version 2 pack index's first eight bytes.
var idxMagic = []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}

// idxCount reads the count of objects of the pack name (pack-<hash>)
// from its index.
func idxCount(common, name string) (uint32, error) {
	f, err := openAdmin(common, filepath.Join("objects", "pack", name+".idx"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [idxHeader]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return 0, fmt.Errorf("%s.idx: %w", name, errIdxFormat)
	}
	if !bytes.Equal(head[:8], idxMagic) {
		return 0, fmt.Errorf("%s.idx: %w", name, errIdxFormat)
	}
	return binary.BigEndian.Uint32(head[idxHeader-4:]), nil
}

// idxNames reads the names of the objects in the pack name from its
// index, sorted, as the index keeps them.
func idxNames(common, name string) (objectIDs, error) {
	f, err := openAdmin(common, filepath.Join("objects", "pack", name+".idx"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var head [idxHeader]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || !bytes.Equal(head[:8], idxMagic) {
		return nil, fmt.Errorf("%s.idx: %w", name, errIdxFormat)
	}
	n := int64(binary.BigEndian.Uint32(head[idxHeader-4:]))
	// Each object has its name, a CRC and an offset; two checksums end it.
	if fi, err := f.Stat(); err != nil || fi.Size() < idxHeader+n*28+40 {
		return nil, fmt.Errorf("%s.idx: %w", name, errIdxFormat)
	}
	ids := make(objectIDs, n*20)
	if _, err := io.ReadFull(f, ids); err != nil {
		return nil, fmt.Errorf("%s.idx: %w", name, err)
	}
	return ids, nil
}

// packsHold checks that the packs written (by name) hold every object of
// want, before what held them is removed.
func packsHold(common string, written []string, want []objectIDs) error {
	if len(written) == 0 {
		return errors.New("no pack written")
	}
	held := make([]objectIDs, len(written))
	for i, p := range written {
		ids, err := idxNames(common, p)
		if err != nil {
			return err
		}
		held[i] = ids
	}
	for _, ids := range want {
		for i := range ids.len() {
			if !slices.ContainsFunc(held, func(h objectIDs) bool { return h.has(ids.at(i)) }) {
				return fmt.Errorf("the new pack lacks %x", ids.at(i))
			}
		}
	}
	return nil
}

// removePacked removes the packs rolled up and the loose objects packed,
// through the door on the git directory. A pack's index goes first, as
// git removes a pack: a reader that still finds the index finds its pack.
// A pack's .rev and .bitmap go with it.
func removePacked(common string, rolled []packFile, loose objectIDs) {
	b, err := openBeneath(common)
	if err != nil {
		return
	}
	defer b.Close()
	for _, p := range rolled {
		for _, ext := range []string{".idx", ".pack", ".rev", ".bitmap"} {
			_ = b.remove(filepath.Join("objects", "pack", p.name+ext))
		}
	}
	for i := range loose.len() {
		o := hex.EncodeToString(loose.at(i))
		_ = b.remove(filepath.Join("objects", o[:2], o[2:]))
	}
}
