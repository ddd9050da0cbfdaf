package tools

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// pathResult turns a resolution error into the sentence the model sees.
func pathResult(p string, err error) workers.Result {
	var de *kept.DeniedError
	switch {
	case errors.As(err, &de):
		return errResult("path %s is kept from you: %s, so no tool reads or writes it", p, de.Error())
	case errors.Is(err, workers.ErrOutsideRoot):
		return errResult("path %s is outside the project root", p)
	case errors.Is(err, workers.ErrHome):
		return errResult("path %s starts with ~, which is not expanded: paths are relative to the project root, so name a place inside the project", p)
	case errors.Is(err, workers.ErrKept):
		return errResult("path %s is kept from you: it holds the user's secrets or ralph's own configuration, which no tool reads or writes", p)
	}
	return errResult("cannot use path %s: %v", p, err)
}

// refusal is the sentence for a failed file operation: a path that may not
// be used, or a filesystem error, in terms of the path the model gave.
func refusal(action, p, display string, err error) workers.Result {
	var gd *workers.GitDirError
	switch {
	case errors.Is(err, workers.ErrOutsideRoot), errors.Is(err, workers.ErrHome), errors.Is(err, workers.ErrKept), errors.Is(err, syscall.ELOOP):
		return pathResult(p, err)
	case errors.As(err, &gd) && gd.Dir != "":
		return errResult("cannot %s %s: it lies in %s, a git directory (a repository's HEAD, objects, configuration and hooks), which the file tools never change, as they never change .git: git runs the programs its configuration names outside the sandbox; change a repository's settings with git config in a command, which the sandbox checks", action, display, gd.Dir)
	case errors.As(err, &gd):
		return errResult("cannot %s %s: git reads it as a repository's configuration (a file the configuration includes), which the file tools never change: git runs the programs it names outside the sandbox; change it with a command, which the sandbox checks", action, display)
	case errors.Is(err, workers.ErrProtected):
		return errResult("cannot %s %s: .git and .ralph are protected (git's internals and ralph's own state), so the file tools never change anything in them", action, display)
	case errors.Is(err, workers.ErrNotRegular):
		return errResult("cannot %s %s: it is not a regular file", action, display)
	}
	var se *workers.SizeError
	if errors.As(err, &se) {
		return sizeResult(action, display, se)
	}
	return fsErrorResult(action, display, err)
}

// fsErrorResult describes a file system error in terms of the path the model
// used rather than the absolute path inside the error.
func fsErrorResult(action, display string, err error) workers.Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errResult("cannot %s %s: it does not exist", action, display)
	case errors.Is(err, fs.ErrPermission):
		return errResult("cannot %s %s: permission denied", action, display)
	case errors.Is(err, syscall.ENOTDIR):
		return errResult("cannot %s %s: a parent of it is a file, not a directory", action, display)
	case errors.Is(err, syscall.EISDIR):
		return errResult("cannot %s %s: it is a directory", action, display)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errResult("cannot %s %s: %v", action, display, pe.Err)
	}
	return errResult("cannot %s %s: %v", action, display, err)
}

// sizeResult is the one sentence for a file, or content for one, above
// workers.MaxEditFile: the file tools hold what they change whole, so a
// larger file is for run_command, which streams it.
func sizeResult(action, display string, se *workers.SizeError) workers.Result {
	bound := text.Size(workers.MaxEditFile)
	if se.Wrote {
		return errResult("cannot %s %s: the new content would be %s, more than the %s the file tools write; nothing was written", action, display, text.Size(se.Size), bound)
	}
	return errResult("cannot %s %s: it is %s, more than the %s the file tools edit; use run_command (sed, a script) for a file this large", action, display, text.Size(se.Size), bound)
}
