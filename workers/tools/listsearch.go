package tools

import (
	"path"
	"path/filepath"
	"strings"
)

const (
	maxListEntries   = 1000
	maxSearchMatches = 200
	maxSearchFile    = 2 << 20 // larger files are generated or data, not source
	maxMatchLineLen  = 300     // runes of a matching line shown
)

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
