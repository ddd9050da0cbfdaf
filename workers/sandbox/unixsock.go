package sandbox

import (
	"path/filepath"
	"slices"
	"sync"
)

// AllowUnixSockets lets commands connect to the named Unix sockets at
// paths (absolute; the person's sandbox_unix_sockets), which are outside
// the project as a rule: every other named socket outside it is refused.
// Each path is kept as given and with its symbolic links resolved, so
// /var/run/docker.sock matches the socket bound at /run/docker.sock too;
// a socket that does not exist yet has its directory resolved.
func (p *Policy) AllowUnixSockets(paths ...string) {
	for _, path := range paths {
		if !filepath.IsAbs(path) {
			continue
		}
		clean := filepath.Clean(path)
		p.UnixSockets = append(p.UnixSockets, clean)
		if real, err := filepath.EvalSymlinks(clean); err == nil {
			p.UnixSockets = append(p.UnixSockets, real)
		} else if dir, err := filepath.EvalSymlinks(filepath.Dir(clean)); err == nil {
			p.UnixSockets = append(p.UnixSockets, filepath.Join(dir, filepath.Base(clean)))
		}
	}
	slices.Sort(p.UnixSockets)
	p.UnixSockets = slices.Compact(p.UnixSockets)
}

// unixSocketAllowed reports whether a named socket at path (absolute,
// cleaned) may be connected to: it is under the project root, or one the
// person allowed.
func (p *Policy) unixSocketAllowed(path string) bool {
	return within(p.Root, path) || slices.Contains(p.UnixSockets, path)
}

// socketRefusals remembers the socket connects the sandbox refused, with
// the process group of the command that asked, until Explain tells the
// model of them: a refused connect often leaves nothing in the output
// that names a socket (python's bare "PermissionError: [Errno 13]
// Permission denied", curl's "Couldn't connect to server").
type socketRefusals struct {
	mu   sync.Mutex
	list []socketRefusal
}

type socketRefusal struct {
	pgid int
	what string // the socket's path, or @name for an abstract one
}

// maxRefusals bounds the memory: a command that tries thousands of
// sockets is told of the latest.
const maxRefusals = 32

// refusalsInit guards the creation of a policy's socketRefusals, which
// policies made as literals do not have.
var refusalsInit sync.Mutex

func (p *Policy) socketRefusals() *socketRefusals {
	refusalsInit.Lock()
	defer refusalsInit.Unlock()
	if p.refusals == nil {
		p.refusals = &socketRefusals{}
	}
	return p.refusals
}

// refused records a connect to the socket what, refused for a command in
// process group pgid.
func (p *Policy) refused(pgid int, what string) {
	r := p.socketRefusals()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.list {
		if x == (socketRefusal{pgid, what}) {
			return
		}
	}
	if len(r.list) == maxRefusals {
		r.list = r.list[1:]
	}
	r.list = append(r.list, socketRefusal{pgid, what})
}

// takeRefusals returns, and forgets, the refused sockets of commands
// that have ended (their process group is gone): Explain runs for a
// command once it has ended, and commands still running are not its.
func (p *Policy) takeRefusals() []string {
	r := p.socketRefusals()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	keep := r.list[:0]
	for _, x := range r.list {
		if groupGone(x.pgid) {
			if !slices.Contains(out, x.what) {
				out = append(out, x.what)
			}
			continue
		}
		keep = append(keep, x)
	}
	r.list = keep
	return out
}
