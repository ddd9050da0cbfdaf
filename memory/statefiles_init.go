package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/rootfs"
)

// agentHeader opens AGENT.md, ralph's own file: what it knows about
// working on the project, apart from the person's instructions.
const agentHeader = "# AGENT.md\n\n" +
	"What ralph knows about working on this project: its own learnings, apart from your instructions " +
	"(AGENTS.md or CLAUDE.md, which ralph reads and does not write). ralph reads this file at the start of " +
	"every session, and its remember tool adds one dated line under Learnings, such as " +
	"\"- The integration tests need a running Postgres (2026-01-05)\". " +
	"Edit freely: fix a wrong fact, delete a stale one.\n"

// instructionsTemplate is the AGENTS.md ralph init starts where a project
// has no instructions file: the person's, for every coding agent, which
// ralph reads and leaves to them (and to chat's /init, which has the model
// write it from the codebase).
const instructionsTemplate = "# AGENTS.md\n\n" +
	"Instructions for the coding agents that work on this project: ralph and the other agents that follow " +
	"the AGENTS.md convention read this file at the start of every session (Claude Code reads " +
	"CLAUDE.md; one that says @AGENTS.md shares it). Write how to build, lint and test (a single test " +
	"too), the layout and the conventions the code follows; `/init` in `ralph chat` has the model draft " +
	"it from the codebase. ralph keeps what it learns in AGENT.md, not here.\n"

const goalsTemplate = "# Goals\n\n" +
	"What you want from this project overall, in your own words. ralph reads this at the start of " +
	"every session and weighs each task against it; update it when your aims change.\n\n" +
	"<!-- For example:\n" +
	"- A CLI that turns CSV exports into clean JSON, using only the standard library.\n" +
	"- Every command has tests, and the whole suite runs in under ten seconds.\n" +
	"-->\n"

const tasksTemplate = "# Tasks\n\n" +
	"One task per line; ralph works through open tasks top to bottom. " +
	"States: [ ] open, [x] done, [~] in progress, [!] failed, [-] skipped.\n\n" +
	"<!-- - [ ] Add a --json flag to the list command -->\n"

const todoTemplate = "# TODO\n\n" +
	"Loose notes and ideas for later, not tasks yet. ralph reads this for context and may add to it; " +
	"move an item to RALPH_TASKS.md when it should be done.\n\n" +
	"<!-- For example:\n" +
	"- The config loader silently ignores unknown keys; should it warn?\n" +
	"-->\n"

// The progress template describes the entry format in prose rather than
// with an example entry, because an example heading would look like a real
// entry boundary to LoadStateDocs.
const progressTemplate = "# Progress\n\n" +
	"A dated entry per completed task or iteration, newest last. ralph appends here and never " +
	"rewrites earlier entries, but moves the oldest to .ralph/progress/ once this file grows large; the most recent ones are part of its context at the start of " +
	"every session. Each entry is a heading such as `## 2026-01-05 14:03 UTC — Add --json flag`, " +
	"a short summary, and the session and iteration that wrote it.\n"

// stateGitignore is .ralph/.gitignore as ralph creates it: everything in
// .ralph/ is per-machine (session logs and transcripts, the lock, the input
// history, session.json) except config.toml, which a project may share,
// and progress/, the older entries of RALPH_PROGRESS.md, which a project
// that commits that file commits too.
// Without it `git add .` would commit transcripts. The file ignores itself
// too: were it kept, a project without a shared config.toml would show
// .ralph/ as untracked and `git add -A` would commit the ignore file alone.
// The patterns are relative to the file's own directory.
const stateGitignore = "# ralph's per-machine state (session logs, lock, input history) stays out of git;\n" +
	"# only config.toml and the archived progress entries are shared with the project.\n" +
	"/*\n" +
	"!/config.toml\n" +
	"!/progress/\n"

// legacyStateGitignore is what earlier versions wrote as stateGitignore,
// keeping the file itself out of the ignore; the next ralph (or `ralph
// init`) replaces it, byte for byte unchanged, with today's text, and
// leaves any edited one alone. priorStateGitignore is the text before the
// progress archive (progressrotate.go) was shared too, replaced the same
// way.
const legacyStateGitignore = "# ralph's per-machine state (session logs, lock, input history) stays out of git;\n" +
	"# only config.toml is shared with the project.\n" +
	"/*\n" +
	"!/.gitignore\n" +
	"!/config.toml\n"

const priorStateGitignore = "# ralph's per-machine state (session logs, lock, input history) stays out of git;\n" +
	"# only config.toml is shared with the project.\n" +
	"/*\n" +
	"!/config.toml\n"

// oldStateGitignore reports whether s is, byte for byte, a text earlier
// versions wrote as .ralph/.gitignore.
func oldStateGitignore(s string) bool {
	return s == legacyStateGitignore || s == priorStateGitignore
}

// ralphIgnores are the per-machine parts of .ralph/ that ralph adds to a
// .gitignore a person wrote, where "/*" would override their own lines.
// The patterns are relative to .ralph/.gitignore's own directory:
// ".ralph/sessions/" written there would match .ralph/.ralph/sessions and
// ignore nothing.
var ralphIgnores = []string{"/sessions/", "/archive/", "/*.lock", "/history", "/session.json", "/*.sock"}

// EnsureStateDir makes root's .ralph/ directory if it is missing, and
// when this call made it, writes .ralph/.gitignore into it (atomically,
// into a directory nobody else has touched yet), so a project's state is
// out of git from its first byte. A .ralph/ that exists is left as it is:
// its .gitignore, or its absence, is the person's choice; only the exact
// text earlier versions wrote, which left .ralph/ showing in git status,
// and an empty file, which ralph never writes and a crash of the machine
// can leave of the one it wrote (see AcquireLock), are replaced with
// today's. The .gitignore is durable when it returns.
func EnsureStateDir(fs afero.Fs, root string) error {
	written, err := ensureStateDir(fs, root)
	if err != nil || written == "" {
		return err
	}
	return syncStateDir(fs, written)
}

// ensureStateDir is EnsureStateDir leaving the .gitignore it wrote, if
// any, to be made durable by its caller (syncStateDir): it returns that
// file's path, or "" when it wrote none.
func ensureStateDir(fs afero.Fs, root string) (written string, err error) {
	dir := filepath.Join(root, StateDir)
	path := filepath.Join(dir, ".gitignore")
	err = fs.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		old, err := afero.ReadFile(fs, path)
		var nr *rootfs.NotRegularError
		if err == nil && (oldStateGitignore(string(old)) || len(old) == 0) ||
			errors.As(err, &nr) && !nr.Mode.IsDir() {
			// A FIFO (or a socket, a device) is no file of the
			// person's either, and git, which opens every .gitignore
			// it passes and waits on a FIFO, would hang ralph's next
			// checkpoint: the rename replaces it, never opening it.
			return path, WriteFileAtomicUnsynced(fs, path, []byte(stateGitignore), 0o644)
		}
		return "", nil
	}
	if errors.Is(err, os.ErrNotExist) {
		// The root itself is missing: make it, then try again.
		if err := fs.MkdirAll(root, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		err = fs.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			return "", nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return path, WriteFileAtomicUnsynced(fs, path, []byte(stateGitignore), 0o644)
}

// syncStateDir makes the .gitignore ensureStateDir wrote durable, with
// its name in .ralph/.
func syncStateDir(fs afero.Fs, gitignore string) error {
	if err := syncFile(fs, gitignore); err != nil {
		return &FileError{Op: "save", Path: gitignore, Err: err}
	}
	syncDir(fs, filepath.Dir(gitignore))
	return nil
}

// InitResult reports what InitProject did, with paths relative to the root.
type InitResult struct {
	Created  []string    `json:"created"`
	Existing []string    `json:"existing"` // already present and left as they were (.ralph/.gitignore may gain lines)
	Info     ProjectInfo `json:"info"`
	// Instructions is the person's instructions file after init: the
	// AGENTS.md or CLAUDE.md it found, or the AGENTS.md it started where
	// there was none.
	Instructions string `json:"instructions"`
}

// Lines are what ralph init and chat's /init say of res, one a line.
func (res InitResult) Lines() []string {
	var out []string
	for _, p := range res.Created {
		out = append(out, "created  "+p)
	}
	for _, p := range res.Existing {
		out = append(out, "kept     "+p+" (already there)")
	}
	if len(res.Info.Languages) > 0 {
		line := "detected " + strings.Join(res.Info.Languages, ", ")
		if len(res.Info.Test) > 0 {
			line += "; tests: " + res.Info.Test[0]
		}
		out = append(out, line)
	}
	return out
}

// InitProject creates the state files that are missing from root, with
// short templates, and never overwrites one that exists: the person may
// have written it before running `ralph init`. A project it may not write
// to is a *NotWritableError.
func InitProject(fs afero.Fs, root string, now time.Time) (InitResult, error) {
	res, err := initProject(fs, root, now)
	return res, NotWritable(root, err)
}

func initProject(fs afero.Fs, root string, now time.Time) (InitResult, error) {
	res := InitResult{Info: DetectProject(fs, root)}
	// A project whose instructions file is there already keeps it as it
	// is, byte for byte (a link too): the person's CLAUDE.md or
	// AGENTS.md, which their colleagues and other tools read. ralph's own
	// file, AGENT.md, goes beside it.
	for _, name := range InstructionFiles {
		if _, err := lstat(fs, filepath.Join(root, name)); err == nil {
			res.Existing = append(res.Existing, name)
			res.Instructions = name
			break
		}
	}
	files := []struct{ name, text string }{{AgentFile, agentTemplate(res.Info, now)}}
	if res.Instructions == "" {
		files = append(files, struct{ name, text string }{InstructionsFile, instructionsTemplate})
	}
	files = append(files, []struct{ name, text string }{
		{GoalsFile, goalsTemplate},
		{TasksFile, tasksTemplate},
		{ProgressFile, progressTemplate},
		{TodoFile, todoTemplate},
	}...)
	for _, f := range files {
		created, err := createExclusive(fs, filepath.Join(root, f.name), []byte(f.text))
		if err != nil {
			return res, err
		}
		if created {
			res.Created = append(res.Created, f.name)
		} else {
			res.Existing = append(res.Existing, f.name)
		}
		if f.name == InstructionsFile {
			res.Instructions = InstructionsFile
		}
	}
	name := filepath.Join(StateDir, ".gitignore")
	created, err := mergeGitignore(fs, filepath.Join(root, name))
	if err != nil {
		return res, err
	}
	if created {
		res.Created = append(res.Created, name)
	} else {
		res.Existing = append(res.Existing, name)
	}
	return res, nil
}

// agentTemplate dates the detected facts so a person can tell when they
// may have gone stale.
func agentTemplate(info ProjectInfo, now time.Time) string {
	list := func(items []string, quote bool) string {
		if len(items) == 0 {
			return "none detected"
		}
		if !quote {
			return strings.Join(items, ", ")
		}
		return "`" + strings.Join(items, "`, `") + "`"
	}
	var b strings.Builder
	b.WriteString(agentHeader + "\n## Project\n\n")
	fmt.Fprintf(&b, "Detected by `ralph init` on %s; correct anything wrong.\n\n", now.UTC().Format(time.DateOnly))
	fmt.Fprintf(&b, "- Languages: %s\n", list(info.Languages, false))
	fmt.Fprintf(&b, "- Build: %s\n", list(info.Build, true))
	fmt.Fprintf(&b, "- Test: %s\n", list(info.Test, true))
	fmt.Fprintf(&b, "- Lint: %s\n", list(info.Lint, true))
	switch {
	case info.Branch != "":
		fmt.Fprintf(&b, "- Git branch: %s\n", info.Branch)
	case info.Git:
		b.WriteString("- Git: yes, no branch checked out\n")
	default:
		b.WriteString("- Git: not a repository\n")
	}
	b.WriteString("\n## Learnings\n")
	return b.String()
}

// createExclusive writes a new file and reports false, without touching
// it, if the file already exists. O_EXCL closes the window in which a
// check-then-write could overwrite a file created in between.
func createExclusive(fs afero.Fs, path string, data []byte) (bool, error) {
	if err := fs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A half-written template would then count as the person's file.
		_ = fs.Remove(path)
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	return true, nil
}

// mergeGitignore adds the missing ralphIgnores lines, keeping every
// existing line, and writes nothing when all are present so that running
// init again is a no-op.
func mergeGitignore(fs afero.Fs, path string) (created bool, err error) {
	old, perm, err := readMarkdown(fs, path)
	if err != nil {
		return false, err
	}
	_, statErr := fs.Stat(path)
	created = errors.Is(statErr, os.ErrNotExist)
	if created {
		return true, WriteFileAtomic(fs, path, []byte(stateGitignore), perm)
	}
	if oldStateGitignore(old) {
		return false, WriteFileAtomic(fs, path, []byte(stateGitignore), perm)
	}
	have := map[string]bool{}
	for line := range strings.Lines(old) {
		have[strings.TrimPrefix(strings.TrimSpace(line), "/")] = true
	}
	if have["*"] {
		return false, nil // everything is ignored already
	}
	eol := eolOf(old)
	text := old
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += eol
	}
	added := false
	for _, p := range ralphIgnores {
		if !have[strings.TrimPrefix(p, "/")] {
			text += p + eol
			added = true
		}
	}
	if !added {
		return false, nil
	}
	return false, WriteFileAtomic(fs, path, []byte(text), perm)
}
