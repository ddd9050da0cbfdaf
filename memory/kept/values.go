package kept

import (
	"bufio"
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// Bounds of Values: what it reads of the files the rules name, and how
// many values it takes, so that a rule over a large tree costs a session's
// start little.
const (
	valuesFiles    = 64
	valuesFileSize = 64 << 10
	valuesMax      = 1000
)

// Values returns the values the files the rules name hold now, for a
// project at root: each non-comment line's value (after `=` or `: `, quotes
// trimmed; else the line) that looks like a secret (see secretLike). The
// session redacts them from every result sent to the model, the second
// layer behind the readers' refusals: where a sandbox cannot hide such a
// file from commands (the Landlock-only fallback hides nothing inside the
// project, macOS's profile only what existed when it was made), a
// command's `cat .env` still reaches the model masked. It reads regular
// files only (O_NONBLOCK: a FIFO is not waited on), at most valuesFiles
// of at most valuesFileSize each.
func (rs Rules) Values(root string) []string {
	if len(rs) == 0 {
		return nil
	}
	paths, _ := rs.Resolve(root)
	person := rootfs.Person()
	var files []string
	for _, p := range paths {
		if len(files) >= valuesFiles {
			break
		}
		fi, err := person.Stat(p)
		switch {
		case err != nil:
		case fi.Mode().IsRegular():
			files = append(files, p)
		case fi.IsDir():
			_ = afero.Walk(person, p, func(q string, fi fs.FileInfo, err error) error {
				if err != nil || len(files) >= valuesFiles {
					return filepath.SkipDir
				}
				if fi.Mode().IsRegular() {
					files = append(files, q)
				}
				return nil
			})
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		data, err := rootfs.ReadHead(person, f, valuesFileSize)
		if err != nil {
			continue
		}
		for _, v := range lineValues(data) {
			if !seen[v] && len(out) < valuesMax {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// lineValues is what each line of data holds that looks like a secret:
// a dotenv or YAML line's value, else the whole line.
func lineValues(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), valuesFileSize)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		v := line
		if i := strings.IndexByte(line, '='); i > 0 {
			v = line[i+1:]
		} else if i := strings.Index(line, ": "); i > 0 {
			v = line[i+2:]
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if secretLike(v) {
			out = append(out, v)
		}
	}
	return out
}

// secretLike says whether v may be a secret rather than a setting: 8
// characters or more, no whitespace, and a digit or a symbol in it, or 20
// characters or more. A word such as "development" or "production" in
// .env is no secret, and redacting it from every result would garble the
// model's work.
func secretLike(v string) bool {
	if len(v) < 8 || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return false
	}
	if len(v) >= 20 {
		return true
	}
	return strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0
}
