package git

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// RunsProgram reports whether git, reading the configuration key (as git
// config --list prints it: section and name in lower case, subsection as
// written) with value, would run a program it names, or would read a file
// that could name one (an include). It is the one list of such keys:
// ralph's own git neutralises them for files the model can write, and the
// sandbox takes back those a command adds to any repository in the
// project.
//
// Most keys run a program whatever their value. The transports are
// classified by value too: a remote's url or pushurl, or the base an
// url.<base>.insteadOf rewrites to, that names the ext:: transport runs
// the program it spells (git fetch there runs "ext::sh -c …"), and fd::
// hands git's protocol to descriptors another program holds; and a
// protocol.allow or protocol.<name>.allow widens which transports git
// may use (always, or user: ext is refused by default only because its
// policy is never), so every value but never counts. An ordinary remote
// (https://…, ssh://…, a path) runs nothing of the model's.
func RunsProgram(key, value string) bool {
	key = strings.ToLower(key)
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return false
	}
	section, name, sub := key[:first], key[last+1:], ""
	if last > first {
		sub = key[first+1 : last]
	}
	switch section {
	case "core":
		switch name {
		case "fsmonitor", "hookspath", "sshcommand", "gitproxy", "pager", "editor", "askpass", "alternaterefscommand":
			return sub == ""
		}
	case "sequence":
		return name == "editor"
	case "pager", "alias", "sendemail", "instaweb":
		// Every pager.<cmd> and alias runs something (an alias without
		// "!" may still pass -c core.fsmonitor=… to the git it runs).
		return true
	case "include":
		return name == "path"
	case "includeif":
		return name == "path"
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return name == "external" || name == "textconv" || name == "command"
	case "merge":
		return name == "driver"
	case "mergetool", "difftool", "browser", "man", "guitool":
		return name == "cmd" || name == "path"
	case "credential":
		return name == "helper"
	case "gpg":
		return name == "program" || name == "defaultkeycommand"
	case "uploadpack":
		return name == "packobjectshook"
	case "remote":
		if name == "url" || name == "pushurl" {
			return sub != "" && programTransport(value)
		}
		return name == "uploadpack" || name == "receivepack" || name == "vcs"
	case "url":
		return (name == "insteadof" || name == "pushinsteadof") && programTransport(sub)
	case "protocol":
		return name == "allow" && !strings.EqualFold(strings.TrimSpace(value), "never")
	case "submodule":
		// update "!command"; a url git submodule update would clone.
		return name == "update" || name == "url" && programTransport(value)
	case "tar":
		return name == "command"
	case "web":
		return name == "browser"
	case "hook":
		return name == "command"
	case "interactive":
		return name == "difffilter"
	case "trailer":
		return name == "command" || name == "cmd"
	case "imap":
		return name == "tunnel"
	}
	return false
}

// programTransport reports whether a URL names a transport that runs a
// program, or speaks git's protocol over descriptors another program
// holds: ext:: and fd::, compared as git would see them at the least
// (case and surrounding space are not given the benefit of the doubt).
func programTransport(url string) bool {
	u := strings.ToLower(strings.TrimSpace(url))
	return strings.HasPrefix(u, "ext::") || strings.HasPrefix(u, "fd::")
}

// ConfigEntry is one key as git read it: the file it came from (an
// absolute path, includes followed), the key and its value.
type ConfigEntry struct {
	File, Key, Value string
	// Scope is git's --show-scope (system, global, local, worktree,
	// command), where the listing asked for it.
	Scope string
}

// configEnv keeps every configuration but the repository's own out of a
// listing: no system or global file, nothing from the environment that
// would name another repository, common directory or configuration.
// HOME stays, so that an include of ~/… names the file the person's git
// reads.
var configEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null", "GIT_OPTIONAL_LOCKS=0"}

// configCommand is git config with args, run with only configEnv and
// gitDir (if any) for git's own variables. git config runs no program:
// it reads and writes files, and neither fsmonitor, hooks nor a pager
// (output is not a terminal, and safeConfig sets core.pager=cat) apply.
func configCommand(ctx context.Context, gitDir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	// A program-running key does nothing here, so no guard's listing is
	// needed: the listing of "/" cost each process that read a
	// repository's configuration one git more.
	cmd := buildWith(ctx, &guard{noDiffDrivers: true, noHooks: true}, "/", nil, false, false, append([]string{"--no-pager", "config"}, args...))
	// Only configEnv and GIT_DIR of git's own variables: the person's
	// GIT_CONFIG, GIT_COMMON_DIR or GIT_CONFIG_PARAMETERS would make git
	// read other files than the repository's.
	env := cmd.Env[:0:0]
	for _, kv := range cmd.Env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env, configEnv...)
	if gitDir != "" {
		env = append(env, "GIT_DIR="+gitDir)
		cmd.Dir = gitDir
	}
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := outputWatched(cmd)
	if err != nil {
		return out, commandError(ctx, Timeout, []string{"config"}, stderr.String(), err)
	}
	return out, nil
}

// ConfigFiles lists every key that git reads from the files of the
// repository whose git directory is gitDir (a .git directory, a linked
// worktree's or a submodule's): its config, the common directory's that
// commondir names, config.worktree where enabled and every file they
// include, conditions evaluated as git evaluates them. Keys given on the
// command line are left out.
//
// A listing is kept while nothing it was read from has changed (its
// files, the files its includes name, HEAD for an include on a branch,
// the git directory itself), as a guard's is: the sandbox's look at the
// project's repository before and after each step of a tool that writes
// files ran git config each time.
func ConfigFiles(ctx context.Context, gitDir string) ([]ConfigEntry, error) {
	listingsMu.Lock()
	l, ok := listings[gitDir]
	listingsMu.Unlock()
	if ok && stampsHold(l.stamps) {
		return slices.Clone(l.entries), nil
	}
	if entries, ok := repositoryListing(gitDir); ok {
		return entries, nil
	}
	start := time.Now()
	out, err := configCommand(ctx, gitDir, "--list", "--show-origin", "--includes", "-z")
	if err != nil {
		return nil, err
	}
	entries := parseList(out, false, gitDir)
	common := commonDir(gitDir)
	files := []string{gitDir, filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree"),
		filepath.Join(gitDir, "commondir"), filepath.Join(gitDir, "HEAD"),
		filepath.Join(common, "config"), filepath.Join(common, "config.worktree")}
	files = append(files, listedFiles(entries)...)
	// A file written while git read it may not be what git read.
	if stamps := stampAll(files); !changedSince(stamps, start) {
		listingsMu.Lock()
		listings[gitDir] = listing{entries: entries, stamps: stamps}
		listingsMu.Unlock()
	}
	return slices.Clone(entries), nil
}

// listing is ConfigFiles' answer for a git directory, with what it was
// read from.
type listing struct {
	entries []ConfigEntry
	stamps  []stamp
}

var (
	listingsMu sync.Mutex
	listings   = map[string]listing{}
)

// ConfigFile lists the keys of one configuration file as git reads it,
// its includes not followed (an include.path is a key like another): what
// it names may be what made ConfigFiles fail, such as a pipe that never
// ends.
func ConfigFile(ctx context.Context, file string) ([]ConfigEntry, error) {
	out, err := configCommand(ctx, "", "--file", file, "--list", "--show-origin", "--no-includes", "-z")
	if err != nil {
		return nil, err
	}
	return parseList(out, false, "/"), nil
}

// parseList reads git config --list --show-origin -z: [scope NUL] origin
// NUL key (newline value) NUL for every key, the scope only when scoped
// (--show-scope). Keys from no file (the command line, standard input, a
// blob) are kept only when scoped, with no File, since the scope then
// says whose they are; a relative origin is taken from dir.
func parseList(out []byte, scoped bool, dir string) []ConfigEntry {
	var entries []ConfigEntry
	fields := bytes.Split(out, []byte{0})
	step := 2
	if scoped {
		step = 3
	}
	for i := 0; i+step-1 < len(fields); i += step {
		var e ConfigEntry
		f := fields[i : i+step]
		if scoped {
			e.Scope, f = string(f[0]), f[1:]
		}
		file, ok := strings.CutPrefix(string(f[0]), "file:")
		if ok {
			if !filepath.IsAbs(file) {
				file = filepath.Join(dir, file)
			}
			e.File = filepath.Clean(file)
		} else if !scoped {
			continue
		}
		e.Key, e.Value, _ = strings.Cut(string(f[1]), "\n")
		entries = append(entries, e)
	}
	return entries
}

// UnsetConfig removes every value of key from one configuration file,
// with git's own writer, so that the file is read and written as git
// reads it (a byte-order mark, long lines, continued values). A key that
// is not there is no error.
func UnsetConfig(ctx context.Context, file, key string) error {
	_, err := configCommand(ctx, "", "--file", file, "--unset-all", key)
	if err != nil && exitCode(err) != 5 { // 5: no such key
		return fmt.Errorf("taking %s out of %s: %w", key, file, err)
	}
	return nil
}
