package git

import (
	"bytes"
	"container/heap"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The first look at a repository (Context) lists the subjects of HEAD's
// latest commits for the system prompt, and every one-shot waits for the
// look before its first request. `git log` there was one of two git
// processes started side by side with ralph's own start-up, on two cores:
// reading the same commits from the repository's files takes a tenth of
// a millisecond. The commits a person made since the last gc are loose
// objects, as the store writes them (objects.go); a packed one, a layout
// or a walk this does not know (replace refs, grafts, a shallow clone, a
// commit in another encoding) goes to git, which knows them all.

// logEnv are the variables that change what git's walk or its store would
// be; with any of them set git lists the commits.
var logEnv = []string{"GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE", "GIT_ALTERNATE_OBJECT_DIRECTORIES"}

// errGitMustTell says a commit or the repository is not one nativeSubjects
// reads.
var errGitMustTell = errors.New("git must read this")

// nativeSubjects is what `git log -n --format=%s` prints for the
// repository whose git directory is gitDir and common directory common:
// one subject a line, newest first, in git's order (by committer date,
// a commit's parents after it in their order, ties in the order met).
// ok is false when git must tell (see above); a branch without commits
// has no subjects. Everything it reads is bounded (maxLogRef,
// maxLogPackedRefs, maxLooseCommit, maxLogReads, maxLogInflated) and goes
// through the strict door; every commit's name is checked against its
// bytes, so a loose object planted at a packed commit's name is not taken
// for it (git reads the pack first).
func nativeSubjects(gitDir, common string, n int) (out []byte, ok bool) {
	for _, v := range logEnv {
		if os.Getenv(v) != "" {
			return nil, false
		}
	}
	door := nativeDoor(common)
	if door == nil {
		return nil, false
	}
	defer door.Close()
	for _, p := range []string{"info/grafts", "shallow"} {
		if _, err := lstat(door, filepath.Join(door.Dir(), filepath.FromSlash(p))); !errors.Is(err, fs.ErrNotExist) {
			return nil, false
		}
	}
	// git leaves refs/replace behind, empty, when its last replace ref
	// is deleted.
	if !noFileBeneath(filepath.Join(common, "refs", "replace")) {
		return nil, false
	}
	packed, ok := readPackedRefs(door)
	if !ok || bytes.Contains(packed, []byte(" refs/replace/")) {
		return nil, false
	}
	head, ok := nativeHead(gitDir, door, packed)
	if !ok {
		return nil, false
	}
	var b bytes.Buffer
	q := &commitQueue{}
	seen := map[string]bool{}
	inflated := 0
	push := func(name string) error {
		if seen[name] {
			return nil
		}
		if len(seen) == maxLogReads {
			// An octopus of many parents: git walks it.
			return errGitMustTell
		}
		seen[name] = true
		body, ok := readLooseCommit(door, name)
		if inflated += len(body); !ok || inflated > maxLogInflated {
			return errGitMustTell // packed, not there, or not as git writes it
		}
		c, err := parseLogCommit(body)
		if err != nil {
			return err
		}
		c.seq = len(seen)
		heap.Push(q, c)
		return nil
	}
	if head != "" {
		if push(head) != nil {
			return nil, false
		}
	}
	for i := 0; i < n && q.Len() > 0; i++ {
		c := heap.Pop(q).(*logCommit)
		b.WriteString(c.subject)
		b.WriteByte('\n')
		// git parses a commit's parents as it takes the commit, the
		// last one listed too: a missing parent there fails its log.
		for _, p := range c.parents {
			if push(p) != nil {
				return nil, false
			}
		}
	}
	return b.Bytes(), true
}

// Bounds of what one walk reads.
const (
	maxLogReads    = 256      // commits
	maxLogInflated = 16 << 20 // bytes of commits, all told
	maxLogRef      = 4 << 10  // HEAD, a loose ref
)

// nativeHead is HEAD's commit, "" on a branch without commits, read as
// git writes them and nothing else: HEAD (in gitDir) is a commit's name
// or "ref: refs/heads/<branch>" for a branch name plainBranch takes, the
// branch's loose ref (through door, at the common directory) a commit's
// name, else its line in packed (the packed-refs file). ok is false for
// anything else, which git resolves.
func nativeHead(gitDir string, door *rootfs.Fs, packed []byte) (head string, ok bool) {
	gitDoor, err := rootfs.New(gitDir)
	if err != nil {
		return "", false
	}
	defer gitDoor.Close()
	content, ok := readRef(gitDoor, "HEAD")
	if !ok {
		return "", false
	}
	if isCommitName(content) {
		return content, true
	}
	branch, symbolic := strings.CutPrefix(content, "ref: refs/heads/")
	if !symbolic || !plainBranch(branch) {
		return "", false
	}
	if loose, ok := readRef(door, filepath.Join("refs", "heads", filepath.FromSlash(branch))); ok {
		return loose, isCommitName(loose)
	} else if loose != "" {
		return "", false // there, but not a file read here
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if oid, name, found := strings.Cut(line, " "); found && name == "refs/heads/"+branch {
			return oid, isCommitName(oid)
		}
	}
	return "", true
}

// readRef reads the ref file rel through door, up to maxLogRef bytes,
// without its one closing newline. ok is false, and content is "" when
// the file is missing and "?" when it is there but not read here (a link,
// not a regular file, too large, no closing newline).
func readRef(door *rootfs.Fs, rel string) (content string, ok bool) {
	f, err := door.OpenRegular(filepath.Join(door.Dir(), rel))
	if missing(err) {
		return "", false
	}
	if err != nil {
		return "?", false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLogRef+1))
	if err != nil || len(data) > maxLogRef {
		return "?", false
	}
	c, found := strings.CutSuffix(string(data), "\n")
	if !found || strings.ContainsAny(c, "\n\r") {
		return "?", false
	}
	return c, true
}

// isCommitName reports whether s is a SHA-1 object name as git writes it.
func isCommitName(s string) bool { return len(s) == 40 && isObjectName(s) }

// logCommit is what the walk needs of one commit.
type logCommit struct {
	parents []string
	date    int64
	subject string
	seq     int // the order the walk met it in, for ties
}

// parseLogCommit reads a commit's parents, its committer date and its
// subject as git's %s gives it: the message's first paragraph, after any
// blank lines, its lines without their trailing white space and joined
// by a space. It takes only the layout git writes, "tree", then the
// "parent" lines, "author" and "committer" ("Name <email> 1700000000
// +0000"), then any other headers, none of those four again; git reads
// some other layouts its own way (the date of a committer line that does
// not follow the author line is 0 to it), and they go to git.
func parseLogCommit(body []byte) (*logCommit, error) {
	if bytes.IndexByte(body, 0) >= 0 || bytes.ContainsAny(body, "\v\f") {
		// git's subject ends at a NUL; whether \v and \f are white space
		// at a line's end is git's to say.
		return nil, errGitMustTell
	}
	header, message, found := bytes.Cut(body, []byte("\n\n"))
	if !found {
		return nil, errGitMustTell // no message: not as git writes a commit
	}
	lines := strings.Split(string(header), "\n")
	c := &logCommit{}
	tree, rest := lines[0], lines[1:]
	if t, ok := strings.CutPrefix(tree, "tree "); !ok || !isCommitName(t) {
		return nil, errGitMustTell
	}
	for len(rest) > 0 && strings.HasPrefix(rest[0], "parent ") {
		p := strings.TrimPrefix(rest[0], "parent ")
		if !isCommitName(p) {
			return nil, errGitMustTell
		}
		c.parents, rest = append(c.parents, p), rest[1:]
	}
	if len(rest) < 2 || !strings.HasPrefix(rest[0], "author ") || !strings.HasPrefix(rest[1], "committer ") {
		return nil, errGitMustTell
	}
	date, ok := identDate(strings.TrimPrefix(rest[1], "committer "))
	if !ok {
		return nil, errGitMustTell
	}
	c.date = date
	for _, line := range rest[2:] {
		key, value, _ := strings.Cut(line, " ")
		switch {
		case strings.HasPrefix(line, "tree") || strings.HasPrefix(line, "parent") || strings.HasPrefix(line, "author") || strings.HasPrefix(line, "committer"):
			return nil, errGitMustTell
		case key == "encoding":
			if e := strings.ToLower(value); e != "utf-8" && e != "utf8" {
				return nil, errGitMustTell // git would re-encode it
			}
		}
	}
	var subject []string
	rest = strings.Split(string(message), "\n")
	for _, line := range rest {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			if len(subject) == 0 {
				continue // blank lines before the message
			}
			break
		}
		subject = append(subject, line)
	}
	c.subject = strings.Join(subject, " ")
	return c, nil
}

// identDate is the date of an identity as git writes one, "Name <email>
// 1700000000 +0000": one '>', then a space, the seconds in ASCII digits,
// a space and the zone. Anything else is git's to read.
func identDate(ident string) (int64, bool) {
	if strings.Count(ident, ">") != 1 || strings.Count(ident, "<") != 1 {
		return 0, false
	}
	_, after, _ := strings.Cut(ident, ">")
	secs, zone, found := strings.Cut(strings.TrimPrefix(after, " "), " ")
	if !found || !strings.HasPrefix(after, " ") || len(zone) != 5 || zone[0] != '+' && zone[0] != '-' || secs == "" {
		return 0, false
	}
	for _, r := range secs + zone[1:] {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	d, err := strconv.ParseInt(secs, 10, 64)
	return d, err == nil
}

// commitQueue orders the walk as git's does: the newest committer date
// first, and among equal dates the commit met first.
type commitQueue []*logCommit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if q[i].date != q[j].date {
		return q[i].date > q[j].date
	}
	return q[i].seq < q[j].seq
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*logCommit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// noFileBeneath reports whether dir is missing, or a directory (not a link)
// with nothing but directories beneath it, up to a few of them.
func noFileBeneath(dir string) bool {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.IsDir() {
		return false
	}
	seen := 0
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if seen++; err != nil || !d.IsDir() || seen > 64 {
			return errGitMustTell
		}
		return nil
	})
	return err == nil
}

// maxLogPackedRefs bounds the packed-refs file read here; past it (a
// repository of many thousands of refs), git reads its own.
const maxLogPackedRefs = 4 << 20

// readPackedRefs reads packed-refs through door: nil when there is none;
// ok is false when it is there but not read here.
func readPackedRefs(door *rootfs.Fs) (data []byte, ok bool) {
	f, err := door.OpenRegular(filepath.Join(door.Dir(), "packed-refs"))
	if missing(err) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxLogPackedRefs+1))
	return data, err == nil && len(data) <= maxLogPackedRefs
}
