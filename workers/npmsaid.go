package workers

import (
	"strings"

	"github.com/ralph-dev/ralph/memory/text"
)

// Servers are often started with npx, and when npm cannot fetch or start
// one, its last line only says where its log is ("A complete log of this
// run can be found in: …"). What went wrong is in the lines above it: an
// error code and a sentence or two. npmSaid picks those out of the last
// block of npm's error lines, or returns "" when npm said nothing.
func npmSaid(lines []string) string {
	var block []string
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(text.StripControls(lines[i]))
		rest, ok := npmError(l)
		if !ok {
			if len(block) > 0 {
				break
			}
			continue
		}
		block = append(block, rest)
	}
	if len(block) == 0 {
		return ""
	}
	var code string
	var said []string
	for i := len(block) - 1; i >= 0; i-- {
		l := block[i]
		if c, ok := strings.CutPrefix(l, "code "); ok && code == "" {
			code = strings.TrimSpace(c)
			continue
		}
		// A status repeated before each line of a message ("404 Note
		// that…") is dropped; the first line keeps it ("404 Not Found").
		if f, r, ok := strings.Cut(l, " "); ok && len(said) > 0 && isDigits(f) {
			l = strings.TrimSpace(r)
		}
		if l == "" || isDigits(l) || npmNoise(l) {
			continue
		}
		said = append(said, l)
		if len(said) == 3 {
			break
		}
	}
	out := strings.Join(said, " ")
	if code != "" {
		out = strings.TrimSpace("npm " + code + ": " + out)
	}
	return out
}

// npmError is the text of one of npm's error lines, without its prefix.
func npmError(l string) (string, bool) {
	for _, p := range []string{"npm error", "npm ERR!"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// npmNoise are the lines of npm's errors that never say what went wrong.
func npmNoise(l string) bool {
	for _, p := range []string{"A complete log of this run can be found in", "Note that you can also install from a", "tarball, folder, http url, or git url", "Log files were not written", "syscall ", "errno "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
