package workers

import (
	"errors"
	"path/filepath"
	"strings"
)

// The file tools never act on a path string twice. A path checked first and
// opened afterwards leaves a window in which a racing process can swap a
// directory for a symlink that leads out of the project, so the tools open
// the project root once per call and resolve every path relative to that
// descriptor with the kernel's beneath-resolution (openat2 with
// RESOLVE_BENEATH, see beneath_linux.go): a symlink that leaves the root
// fails inside the kernel, at the moment of use. A file is then created,
// read or replaced through the descriptor of its directory (openat,
// renameat), never through its name again.
//
// Where the kernel has no openat2 (Linux before 5.6, some seccomp filters,
// other systems) the tools fall back to resolving the path in user space
// first (evalExisting) and then opening the resolved path: the check is the
// same but the window between check and use remains, which only a racing
// local process could use.

// ErrProtected is wrapped by writes that would change .git or .ralph.
var ErrProtected = errors.New("path is protected")

// ErrKept is wrapped when a path is one the person keeps from the model
// under every root (Options.Kept): their keys and ralph's own
// configuration and state, when the root holds them (a home directory
// granted with --allow-home-project).
var ErrKept = errors.New("path is kept from the model")

// ErrNotRegular is returned for devices, fifos and sockets, which the file
// tools neither read nor replace: opening a fifo blocks, and replacing a
// device node with a regular file breaks whatever used it.
var ErrNotRegular = errors.New("it is not a regular file")

// IsProtected reports whether a path relative to the root enters .git or
// .ralph at any depth. Names are compared case-insensitively: on a
// case-insensitive filesystem (macOS, mounted FAT) ".GIT/config" is git's
// own file.
func IsProtected(rel string) bool {
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(c, ".git") || strings.EqualFold(c, ".ralph") {
			return true
		}
	}
	return false
}

// Path is where the target's file is, relative to the root with links
// resolved and slash separated.
func (tg Target) Path() string { return filepath.ToSlash(filepath.Join(tg.dirRel, tg.name)) }

// Linked reports whether the name the target was asked for is a symbolic
// link the target followed: removing or moving the target changes the
// file it names, not the link.
func (tg Target) Linked() bool { return tg.linked }

// Exists reports whether the target names a file that exists (a write
// replaces it) rather than one a write creates.
func (tg Target) Exists() bool { return tg.exists }
