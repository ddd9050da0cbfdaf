package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// UnsandboxedHint tells the model how to ask for a command outside the
// sandbox.
const UnsandboxedHint = `if the task really needs it, call run_command again with "unsandboxed": true, which the user must approve`

// Explain returns a note for the model when a command's output shows that
// the sandbox refused something, or "" when it does not. The kernel says
// only "Permission denied" or "Read-only file system", so the note is
// added when such an error names a path the policy forbids writing (or
// names none, when the sandbox is the likely cause), and, without the
// network, when a connection or name lookup failed. A connect to a Unix
// socket outside the project is told apart by the words around the
// denial, or by the sandbox's own record of the connects it refused for
// commands that have ended (their output often names no socket).
func (p *Policy) Explain(output string) string {
	if !p.Confines() {
		return ""
	}
	lines := strings.Split(output, "\n")
	evidence := false
	for _, line := range lines {
		lower := strings.ToLower(line)
		if isDenial(lower) || strings.Contains(lower, "connect") {
			evidence = true
			break
		}
	}
	var refused []string
	if evidence {
		refused = p.takeRefusals()
	}
	fsBlocked, netBlocked, sockBlocked := false, false, len(refused) > 0
	for _, line := range lines {
		lower := strings.ToLower(line)
		if p.deniedSocket(line, lower) {
			sockBlocked = true
			continue // a socket's refusal is not a write's
		}
		// A denial that names no path is the refused socket's, when
		// the sandbox refused one.
		if !fsBlocked && (len(refused) == 0 || len(candidatePaths(line)) > 0) && p.deniedWrite(line, lower) {
			fsBlocked = true
		}
		if !netBlocked && !p.Network && netFailure(lower) {
			netBlocked = true
		}
	}
	var what []string
	if sockBlocked {
		s := "connecting to Unix sockets outside the project is not allowed"
		if len(refused) > 0 {
			s += " (refused: " + strings.Join(refused, ", ") + ")"
		}
		what = append(what, s+"; the user can allow a socket by adding its path to sandbox_unix_sockets in their user config (~/.config/ralph/config.toml)")
	}
	switch {
	case fsBlocked && netBlocked:
		what = append(what, p.Describe())
	case fsBlocked:
		q := *p
		q.Network = true // the network is not what failed
		what = append(what, q.Describe())
	case netBlocked:
		what = append(what, "there is no network (--no-network): connections and name lookups fail")
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf("[ralph: the sandbox (%s) blocked this: %s; %s]", p.Mode, strings.Join(what, "; "), UnsandboxedHint)
}

// RefusedWrite reports whether output shows a write the sandbox refused,
// and the path the refusal names ("" when it names none).
func (p *Policy) RefusedWrite(output string) (string, bool) {
	if !p.Confines() {
		return "", false
	}
	for _, line := range strings.Split(output, "\n") {
		lower := strings.ToLower(line)
		if !p.deniedWrite(line, lower) || p.deniedSocket(line, lower) {
			continue
		}
		for _, path := range candidatePaths(line) {
			if real := p.resolve(path); !p.writable(real) {
				return path, true
			}
		}
		return "", true
	}
	return "", false
}

// deniedSocket reports whether one line of output is a refused connect to
// a Unix socket: a denial that speaks of a socket, or names a socket file
// the policy does not allow, or, with the network on (when the sandbox
// refuses no other connect), speaks of connecting.
func (p *Policy) deniedSocket(line, lower string) bool {
	// A refused connect is EACCES, or EPERM for an abstract socket; a
	// read-only file system or a busy mount point is a write's refusal.
	if !strings.Contains(lower, "permission denied") && !strings.Contains(lower, "operation not permitted") {
		return false
	}
	for _, w := range []string{"socket", "unix:", "dial unix", "unix connect"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	if p.Network && strings.Contains(lower, "connect") {
		return true
	}
	for _, path := range candidatePaths(line) {
		real := p.resolve(path)
		if fi, err := os.Stat(real); err == nil && fi.Mode()&os.ModeSocket != 0 && !p.unixSocketAllowed(real) {
			return true
		}
	}
	return false
}

// denialWords are the kernel's words for a refused write as tools print
// them (EACCES, EPERM, EROFS, and EBUSY for a pinned mount point).
var denialWords = []string{"permission denied", "operation not permitted", "read-only file system", "device or resource busy"}

func isDenial(lower string) bool {
	for _, w := range denialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// quoted matches the paths tools quote in their messages: 'x', ‘x’, "x".
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("'([^']+)'|‘([^’]+)’|\"([^\"]+)\"") })

// deniedWrite reports whether one line of output is a refusal the sandbox
// caused.
func (p *Policy) deniedWrite(line, lower string) bool {
	if !isDenial(lower) {
		return false
	}
	if strings.Contains(lower, "read-only file system") {
		return true // only the sandbox's own mounts are read-only here, as a rule
	}
	paths := candidatePaths(line)
	if len(paths) == 0 {
		// "Permission denied at -e line 1." names nothing; in read-only
		// mode every write is the sandbox's doing.
		return p.Mode == ReadOnly
	}
	for _, path := range paths {
		if !p.writable(p.resolve(path)) {
			return true
		}
	}
	return false
}

// candidatePaths extracts what may be paths from an error line: quoted
// words, path-like fields, and the field just before the error text, as
// in "bash: out.txt: Permission denied".
func candidatePaths(line string) []string {
	var out []string
	for _, m := range quoted().FindAllStringSubmatch(line, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	fields := strings.Split(line, ": ")
	for i, f := range fields {
		beforeDenial := i+1 < len(fields) && isDenial(strings.ToLower(fields[i+1]))
		if words := strings.Fields(f); beforeDenial && len(words) > 0 {
			f = words[len(words)-1] // "could not write config file .git/config"
		}
		f = strings.Trim(strings.TrimSpace(f), `'"‘’`)
		if f == "" || strings.Contains(f, " ") {
			continue
		}
		if beforeDenial || strings.HasPrefix(f, "/") || strings.HasPrefix(f, "./") || strings.HasPrefix(f, "../") || strings.HasPrefix(f, "~/") {
			out = append(out, f)
		}
	}
	return out
}

// resolve makes a path from an error message absolute (relative ones are
// taken from the root, where commands start) and follows symbolic links
// as far as the path exists, so a link pointing out is judged by where it
// points.
func (p *Policy) resolve(path string) string {
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Root, path)
	}
	path = filepath.Clean(path)
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == "/" || dir == "." {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// netFailures are how tools report a network that is not there.
var netFailures = []string{
	"network is unreachable", "could not resolve", "temporary failure in name resolution",
	"name or service not known", "no address associated with hostname", "connection refused",
	"failed to resolve", "getaddrinfo", "cannot assign requested address", "no route to host",
	"name resolution", "couldn't connect to server", "failed to connect to",
}

func netFailure(lower string) bool {
	for _, w := range netFailures {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
