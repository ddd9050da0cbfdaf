package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/workers/proctree"
	"github.com/ralph-dev/ralph/workers/sandbox"
)

// A home directory can lie in the temporary directory (HOME=/tmp/home, as
// CI containers often have it). The sandbox then grants the temporary
// directory around the paths kept in it (the person's keys, ralph's own
// configuration and state), as it grants a sandbox_writable directory:
// nothing can be created directly in a directory so granted, the
// temporary directory itself included, so commands could no longer make
// their temporary files. They get a private temporary directory instead,
// granted whole: made afresh for each Workspace, named by TMPDIR (and TMP
// and TEMP where their environment sets those) in every confined
// program's environment, and removed when the Workspace closes. When
// nothing kept lies in the temporary directory, as on most machines,
// there is none and nothing changes.

// homeInTemp is what of the homes lying in a temporary directory commands
// may not write: each entry of each home but those that hold a directory
// the policy grants (the project under ~/src, say). A home elsewhere is
// not writable at all, and in the temporary directory it must not be
// either: ~/.gitconfig, ~/.bashrc or ~/.claude/settings.json written by a
// command would run the model's code as the person, in their own git,
// shell or Claude Code. Nothing can be created in the home itself, which
// the grant around these entries only lists.
func homeInTemp(homes []string, policy *sandbox.Policy) []string {
	var out []string
	for _, h := range homes {
		entries, err := os.ReadDir(h)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(h, e.Name())
			holds := isInside(p, policy.Root)
			for _, w := range policy.Writable {
				holds = holds || isInside(p, w)
			}
			if !holds {
				out = append(out, p)
			}
		}
	}
	return out
}

// keptIn are the kept paths that lie at or below dir, spelled with dir's
// links resolved (keptUnder); none when dir cannot be resolved.
func keptIn(kept []string, dir string) []string {
	lex, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	real, err := realpath.Eval(lex)
	if err != nil {
		return nil
	}
	return keptUnder(kept, real, lex)
}

// privateTemp names the private temporary directory of the commands
// policy confines, when they need one: under workspace-write, when the
// temporary directory programs are told of (the first of
// sandbox.TempDirs) holds a kept path. It lies in that directory, its
// links resolved, under a name of 64 random bits nobody else can foresee,
// and is granted whole to this session's commands and to no other
// session's (sandbox.PrivateTempPrefix): beside it lie the other
// sessions' private directories, with their git hooks' index copies and
// build caches. It is made (makeTemp) only when the
// first program starts in the sandbox, so that a session that runs none
// makes and removes nothing. "" when none is needed.
func privateTemp(policy *sandbox.Policy, kept []string) string {
	if policy.Mode != sandbox.WorkspaceWrite {
		return ""
	}
	shared := sandbox.TempDirs()[0]
	if len(keptIn(kept, shared)) == 0 {
		return ""
	}
	real, err := realpath.Eval(shared)
	if err != nil {
		return ""
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	dir := filepath.Join(real, sandbox.PrivateTempPrefix+hex.EncodeToString(b[:]))
	policy.SetPrivateTemp(dir)
	return dir
}

// makeTemp makes the private temporary directory, once, mode 0700 by one
// mkdir, which follows no link at the name. Something already at the name
// nobody could foresee is refused: commands do not start. Where it cannot
// be made otherwise, the person cannot write the temporary directory
// either, and commands keep their own TMPDIR, faring no worse than their
// programs would.
func (w *Workspace) makeTemp() error {
	if w.tmp == "" {
		return nil
	}
	w.tmpOnce.Do(func() {
		switch err := os.Mkdir(w.tmp, 0o700); {
		case err == nil:
			w.tmpMade.Store(true)
		case errors.Is(err, fs.ErrExist):
			w.tmpErr = fmt.Errorf("ralph did not make the commands' private temporary directory %s: something else is already there", w.tmp)
		}
	})
	return w.tmpErr
}

// tempBase is the temporary directory w's programs write: the private
// one, made now if no program made it yet (a git hook's files are
// written there before the hook starts), else the shared one.
func (w *Workspace) tempBase() (string, error) {
	if w.tmp == "" {
		return os.TempDir(), nil
	}
	if err := w.makeTemp(); err != nil {
		return "", err
	}
	if !w.tmpMade.Load() {
		// It could not be made, and commands keep their own TMPDIR
		// (makeTemp).
		return os.TempDir(), nil
	}
	return w.tmp, nil
}

// tempEnv is env for a program in w's sandbox: TMPDIR names the private
// temporary directory, and so do TMP and TEMP where env sets them; env
// itself when there is none.
func (w *Workspace) tempEnv(env []string) []string {
	if !w.tmpMade.Load() {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "TMPDIR":
			continue
		case "TMP", "TEMP":
			kv = k + "=" + w.tmp
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR="+w.tmp)
}

// start starts c in w's sandbox: every program ralph confines (the
// model's commands, verify commands, hooks, a project's MCP servers)
// starts here, with its environment's temporary directory made w's.
func (w *Workspace) start(ctx context.Context, c sandbox.Command) (*sandbox.Process, error) {
	if err := w.makeTemp(); err != nil {
		return nil, err
	}
	c.Env = w.tempEnv(c.Env)
	// Not while an editor's call holds ralph's processes still (see
	// holdStill); this covers the sandbox's helper when this start is
	// the one that starts it.
	started := proctree.Starting()
	p, err := w.runner.Start(ctx, c)
	started()
	if err != nil {
		return nil, err
	}
	trackLive(p.Exited())
	return p, nil
}
