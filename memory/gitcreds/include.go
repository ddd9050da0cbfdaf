package gitcreds

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/rootfs"
	"github.com/spf13/afero"
)

// maxIncludeDepth is how deep includes are followed, as git does (its
// MAX_INCLUDE_DEPTH): a file included from an included file, and so on.
const maxIncludeDepth = 10

// includes returns the files that the configuration file at path, read
// through fsys, includes: the values of include.path and of every
// includeIf.<condition>.path, whatever the condition (a file git may
// read is masked), relative to path's directory, with "~/" the person's
// home. A credential moved out of .git/config into a file it includes
// (`git config include.path ../ci-creds.conf`) is git's all the same,
// and so is masked like it. Whether each file exists, and whether fsys
// reaches it (a door reaches nothing outside the project), is the
// caller's to check.
func includes(fsys afero.Fs, path string) []string {
	b, err := rootfs.ReadSmall(fsys, path, MaxConfig)
	if err != nil || !bytes.Contains(bytes.ToLower(b), []byte("include")) {
		return nil
	}
	var out []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), MaxConfig)
	for sc.Scan() {
		rest := strings.TrimLeft(sc.Text(), " \t")
		if strings.HasPrefix(rest, "[") {
			name, after := header(rest)
			section = name
			rest = after
		}
		if section != "include" && section != "includeif" {
			continue
		}
		key, value, ok := keyValue(rest)
		if !ok || key != "path" {
			continue
		}
		if target := includeValue(value); target != "" {
			out = append(out, resolveInclude(path, target))
		}
	}
	return out
}

// includeValue is a path key's value as git reads it: quotes taken off,
// a comment after it dropped.
func includeValue(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, `"`) {
		if end := strings.IndexByte(v[1:], '"'); end >= 0 {
			return v[1 : 1+end]
		}
		return strings.Trim(v, `"`)
	}
	if i := strings.IndexAny(v, "#;"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// resolveInclude is the file an include in the configuration file from
// names: "~/" is the person's home, a relative path is taken from from's
// directory, as git takes it.
func resolveInclude(from, target string) string {
	if rest, ok := strings.CutPrefix(target, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			target = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(from), target)
	}
	return filepath.Clean(target)
}
