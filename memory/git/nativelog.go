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
// has no subjects.
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
	if !noReplaceRefs(door) {
		return nil, false
	}
	head, ok := resolveHead(gitDir, common)
	if !ok || len(head) != 40 && head != "" {
		return nil, false
	}
	var b bytes.Buffer
	q := &commitQueue{}
	seen := map[string]bool{}
	push := func(name string) error {
		if seen[name] {
			return nil
		}
		if len(seen) == maxLogReads {
			// An octopus of thousands of parents: git walks it.
			return errGitMustTell
		}
		seen[name] = true
		c, err := readCommit(door, name)
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
		if i == n-1 {
			break
		}
		for _, p := range c.parents {
			if push(p) != nil {
				return nil, false
			}
		}
	}
	return b.Bytes(), true
}

// maxLogReads bounds the commits one walk reads here.
const maxLogReads = 256

// logCommit is what the walk needs of one commit.
type logCommit struct {
	parents []string
	date    int64
	subject string
	seq     int // the order the walk met it in, for ties
}

// readCommit reads the loose commit name through door (readLooseCommit).
func readCommit(door *rootfs.Fs, name string) (*logCommit, error) {
	body, ok := readLooseCommit(door, name)
	if !ok {
		return nil, errGitMustTell // packed, not there, or not as git writes it
	}
	return parseLogCommit(body)
}

// parseLogCommit reads a commit's parents, its committer date and its
// subject as git's %s gives it: the message's first paragraph, after any
// blank lines, its lines without their trailing white space and joined
// by a space.
func parseLogCommit(body []byte) (*logCommit, error) {
	c := &logCommit{}
	rest := body
	dated := false
	for {
		line, after, found := bytes.Cut(rest, []byte{'\n'})
		if !found {
			return nil, errGitMustTell // no message: not as git writes a commit
		}
		rest = after
		if len(line) == 0 {
			break
		}
		key, value, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "parent":
			p := string(value)
			if len(p) != 40 || !isObjectName(p) {
				return nil, errGitMustTell
			}
			c.parents = append(c.parents, p)
		case "committer":
			// "Name <email> 1700000000 +0000": the date is the field
			// after the last '>'.
			i := bytes.LastIndexByte(value, '>')
			fields := strings.Fields(string(value[i+1:]))
			if i < 0 || len(fields) != 2 {
				return nil, errGitMustTell
			}
			d, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil || d < 0 {
				return nil, errGitMustTell
			}
			c.date, dated = d, true
		case "encoding":
			if e := strings.ToLower(string(value)); e != "utf-8" && e != "utf8" {
				return nil, errGitMustTell // git would re-encode it
			}
		}
	}
	if !dated {
		return nil, errGitMustTell
	}
	if bytes.ContainsAny(rest, "\v\f") {
		// Whether git counts them as white space at a line's end is
		// git's to say.
		return nil, errGitMustTell
	}
	var subject []string
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte{'\n'})
		rest = after
		line = bytes.TrimRight(line, " \t\r")
		if len(line) == 0 {
			if len(subject) == 0 {
				continue // blank lines before the message
			}
			break
		}
		subject = append(subject, string(line))
	}
	c.subject = strings.Join(subject, " ")
	return c, nil
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

// maxLogPackedRefs bounds the packed-refs file looked through for replace
// refs here; past it (a repository of many thousands of refs), git reads
// its own.
const maxLogPackedRefs = 4 << 20

// noReplaceRefs reports whether packed-refs, read through door, is
// missing or names no replace ref.
func noReplaceRefs(door *rootfs.Fs) bool {
	f, err := door.OpenRegular(filepath.Join(door.Dir(), "packed-refs"))
	if missing(err) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLogPackedRefs+1))
	return err == nil && len(data) <= maxLogPackedRefs && !bytes.Contains(data, []byte(" refs/replace/"))
}
