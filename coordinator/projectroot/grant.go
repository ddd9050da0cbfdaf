package projectroot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// AllowHomeFlag is the flag by which the person grants the model a
// directory Grantable refuses: its name says what it risks, the home
// directory, where the person's shell reads its start-up files.
const AllowHomeFlag = "allow-home-project"

// ErrPersonsOwn is a directory ralph does not grant the model — as the
// project, an --add-dir or the directory `ralph mcp serve` serves —
// unless the person names it with --allow-home-project: the file
// system's root, the person's home, or one holding (or lying in) their
// secrets or ralph's own configuration and state. Under a root the model
// may write everything, and ralph itself reads its configuration as the
// person: a .config/ralph/config.toml written there starts a program
// unsandboxed in the person's next ralph, in any project.
var ErrPersonsOwn = errors.New("a directory holding your secrets or ralph's own files")

// grantError is Grantable's refusal: one sentence, bad input (exit 2,
// as config.ErrInvalid) and ErrPersonsOwn.
type grantError struct{ msg string }

func (e *grantError) Error() string { return e.msg }
func (e *grantError) Is(target error) bool {
	return target == ErrPersonsOwn || (&rootError{}).Is(target)
}

// keptList is what Grantable judges a directory by: the person's homes, and
// the paths that stay theirs under any root (the sandbox's hidden list,
// ralph's configuration and state directories), each as given and with
// its links resolved. Tests make their own.
type keptList struct {
	homes []string
	paths []string
}

// keptPaths are this process's: sandbox.SecretPaths (which holds ralph's
// configuration directories) and ralph's state directory
// (memory.RegistryDir), where the registry and the state key lie.
func keptPaths() keptList {
	paths := sandbox.SecretPaths()
	state := memory.RegistryDir(os.Getenv)
	paths = append(paths, state)
	if r, err := realpath.Eval(state); err == nil {
		paths = append(paths, r)
	}
	return keptList{homes: sandbox.Homes(), paths: paths}
}

// Kept are the paths under a granted root that stay hidden from the
// model's file tools and commands whichever root it is: the sandbox's
// hidden list, ralph's configuration and its state directory.
func Kept() []string { return keptPaths().paths }

// Grantable is the one decision which directory ralph may grant the
// model as a root: what names the root in the refusal ("the project",
// "--add-dir"). It refuses the file system's root, the person's home
// ($HOME or their login home, compared as files, so a link to it is it
// too), and a directory that holds or lies in a path of Kept — resolved
// through links, so a dotfiles repository that ~/.config/ralph links into
// is refused as well — unless allowHome, the person's --allow-home-project.
// Under a root it grants with allowHome, Kept stays hidden (workers).
func Grantable(dir, what string, allowHome bool) error {
	if allowHome {
		return nil
	}
	return keptPaths().grantable(dir, what)
}

func (k keptList) grantable(dir, what string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return badDir(err, "%s %s", what, dir)
	}
	real, err := realpath.Eval(abs)
	if err != nil {
		real = abs
	}
	refuse := func(why string) error {
		return &grantError{msg: fmt.Sprintf("ralph does not give the model %s as %s: %s "+
			"(name another directory, or add --%s to grant it with your secrets and ralph's own files still hidden)",
			abs, what, why, AllowHomeFlag)}
	}
	if filepath.Dir(real) == real {
		return refuse("it is the file system's root")
	}
	fi, err := os.Stat(real)
	if err != nil {
		return badDir(err, "%s %s", what, dir)
	}
	for _, h := range k.homes {
		if hi, err := os.Stat(h); err == nil && os.SameFile(fi, hi) {
			return refuse("it is your home directory, where your shell's start-up files, your keys and ralph's own configuration lie")
		}
	}
	for _, h := range k.homes {
		if within(real, h) || within(abs, h) {
			return refuse("it holds your home directory " + h)
		}
	}
	for _, p := range k.paths {
		p = filepath.Clean(p)
		switch {
		case p == real || p == abs:
			return refuse("it is " + p + ", which is kept from the model")
		case within(real, p) || within(abs, p):
			return refuse("it holds " + p + ", which is kept from the model")
		case within(p, real) || within(p, abs):
			return refuse("it lies in " + p + ", which is kept from the model")
		}
	}
	return nil
}

// within reports whether the clean absolute path p is dir or lies below
// it.
func within(dir, p string) bool {
	if !filepath.IsAbs(dir) || !filepath.IsAbs(p) {
		return false
	}
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
