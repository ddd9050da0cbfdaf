package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
	"golang.org/x/sys/unix"
)

const (
	maxListEntries   = 1000
	maxSearchMatches = 200
	maxSearchFile    = 2 << 20 // larger files are generated or data, not source
	maxMatchLineLen  = 300     // runes of a matching line shown
)

func (t *Toolset) listFiles(ctx context.Context, raw json.RawMessage) Result {
	var a ListFilesParams
	if err := decodeArgs(ToolListFiles, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Path == "" {
		a.Path = "."
	}
	if err := validGlob(a.Pattern); err != nil {
		return errResult("invalid pattern %q: %v", a.Pattern, err)
	}
	real, display, err := t.resolve(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if _, err := os.Stat(real); err != nil {
		return fsErrorResult("list", display, err)
	}

	var out strings.Builder
	count, stopped := 0, ""
	err = t.walkProject(ctx, real, func(_ *rootDir, p string, d fs.DirEntry) error {
		if p == real && d.IsDir() {
			return nil // the directory itself is not an entry of its listing
		}
		rel := t.relSlash(p)
		if a.Pattern != "" && !matchAny(a.Pattern, d.Name(), rel, relTo(real, p)) {
			return nil
		}
		line := rel
		if d.IsDir() {
			line += "/"
		}
		if count == maxListEntries || out.Len()+len(line)+1 > t.maxOut {
			stopped = fmt.Sprintf("[listing stopped after %d entries; narrow it with path or pattern]", count)
			return fs.SkipAll
		}
		out.WriteString(line)
		out.WriteByte('\n')
		count++
		return nil
	})
	if err != nil {
		return errResult("list_files stopped: %v", err)
	}
	if count == 0 {
		if a.Pattern != "" {
			return Result{Output: fmt.Sprintf("no entries under %s match %q", display, a.Pattern)}
		}
		return Result{Output: fmt.Sprintf("%s has no entries", display)}
	}
	if stopped != "" {
		out.WriteString(stopped)
	}
	return Result{Output: strings.TrimSuffix(out.String(), "\n")}
}

func (t *Toolset) search(ctx context.Context, raw json.RawMessage) Result {
	var a SearchParams
	if err := decodeArgs(ToolSearch, raw, &a); err != nil {
		return errResult("%v", err)
	}
	if a.Pattern == "" {
		return errResult("search needs a non-empty pattern")
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return errResult("invalid regular expression: %v", err)
	}
	if a.Path == "" {
		a.Path = "."
	}
	real, display, err := t.resolve(a.Path)
	if err != nil {
		return pathResult(a.Path, err)
	}
	if _, err := os.Stat(real); err != nil {
		return fsErrorResult(ToolSearch, display, err)
	}

	var out strings.Builder
	matches, stopped := 0, ""
	err = t.walkProject(ctx, real, func(root *rootDir, p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil // directories are walked into; symlinks could lead outside the root
		}
		data, ok := t.readSearchable(root, p)
		if !ok {
			return nil
		}
		rel := t.relSlash(p)
		for lineNo := 1; len(data) > 0; lineNo++ {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !re.Match(line) {
				continue
			}
			entry := fmt.Sprintf("%s:%d: %s\n", rel, lineNo, clipLine(line))
			if matches == maxSearchMatches || out.Len()+len(entry) > t.maxOut {
				stopped = fmt.Sprintf("[search stopped after %d matches; narrow the pattern or path]", matches)
				return fs.SkipAll
			}
			out.WriteString(entry)
			matches++
		}
		return nil
	})
	if err != nil {
		return errResult("search stopped: %v", err)
	}
	if matches == 0 {
		return Result{Output: fmt.Sprintf("no matches for %q in %s", a.Pattern, display)}
	}
	if stopped != "" {
		out.WriteString(stopped)
	}
	return Result{Output: strings.TrimSuffix(out.String(), "\n")}
}

// readSearchable returns the file's content unless it is too large, binary or
// unreadable; search skips such files silently because they are rarely what
// the model is looking for.
func (t *Toolset) readSearchable(root *rootDir, p string) ([]byte, bool) {
	rel, err := filepath.Rel(t.root, p)
	if err != nil {
		return nil, false
	}
	f, err := root.openFile(rel)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxSearchFile {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSearchFile+1))
	if err != nil || len(data) > maxSearchFile {
		return nil, false
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return nil, false
	}
	return data, true
}

// clipLine trims a matching line for display, cutting very long lines (such
// as minified code) to maxMatchLineLen runes.
func clipLine(line []byte) string {
	return text.ClipRunes(strings.TrimRight(string(line), "\r"), maxMatchLineLen, " [...]")
}

// walkProject walks the directory (or file) real in lexical order,
// skipping the directories in skipNames and unreadable directories, and
// stops early when ctx is done. Symlinks are reported but never followed,
// and every directory is opened beneath the root (see beneath.go), so a
// directory swapped for a symlink mid-walk cannot take the walk outside.
// fn gets absolute paths and the open root, to read files through it.
func (t *Toolset) walkProject(ctx context.Context, real string, fn func(root *rootDir, p string, d fs.DirEntry) error) error {
	root, err := t.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()
	start := t.relSlash(real)
	err = fs.WalkDir(beneathFS{root}, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // an unreadable subdirectory should not spoil the rest
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != start && skipNames[d.Name()] {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return fn(root, filepath.Join(t.root, filepath.FromSlash(p)), d)
	})
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// beneathFS is the project as an fs.FS whose every Open resolves beneath
// the root.
type beneathFS struct{ r *rootDir }

func (b beneathFS) Open(name string) (fs.File, error) {
	fd, err := b.r.open(filepath.FromSlash(name), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(b.r.t.root, filepath.FromSlash(name))), nil
}

// relTo returns p relative to dir with slashes, for matching patterns written
// relative to the listed directory.
func relTo(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// validGlob checks every segment of a slash separated glob, because
// path.Match only reports a malformed pattern when matching reaches it.
func validGlob(pattern string) error {
	for _, seg := range strings.Split(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}

// matchAny reports whether pattern matches any of the candidate names.
func matchAny(pattern string, candidates ...string) bool {
	for _, c := range candidates {
		if c != "" && matchGlob(pattern, c) {
			return true
		}
	}
	return false
}

// matchGlob matches a slash separated path against a glob where each segment
// follows path.Match and a "**" segment matches any number of directories.
func matchGlob(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(segs) + 1 {
				if matchSegments(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
