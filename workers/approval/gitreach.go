package approval

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// What git will do is decided by git, not by the word after `git`: an
// alias (`-c alias.pp=push`, GIT_CONFIG_COUNT/KEY/VALUE, a config file
// named by GIT_CONFIG_GLOBAL) turns `git pp` into `git push`, plumbing
// (`git send-pack`) does what porcelain does, and some commands run
// others (`rebase -x`, `submodule foreach`, `-c core.sshCommand=…`). So
// both of the policy's judgements of a git command, whether an ask_before
// (or --disallowed-tools) pattern holds it and whether a remembered rule
// may let it run, start from judgeGit.

// gitAct is what a git command may do, as judgeGit reads it.
type gitAct struct {
	at  int    // the subcommand's index in the words, -1 when there is none
	sub string // the subcommand as written
	// does are the porcelain commands whose work the subcommand does
	// (send-pack does push's), besides itself.
	does []string
	// why says why git may run any of its commands here ("" when it runs
	// only sub): a setting, an option or a subcommand that hands git, or
	// a shell, something to run.
	why string
	// alias is set when the only reason is a subcommand that is not
	// git's own: an alias or an extension (`git lfs`). A rule that names
	// it exactly is the person's word for it; a pattern for any other
	// git command still counts as matching it.
	alias bool
	// shells are shell commands git runs that ralph can read: a "!"
	// alias, `rebase -x CMD`, `submodule foreach CMD`, `bisect run CMD`.
	shells []string
}

// anything reports whether the command may do what any git command does.
func (g gitAct) anything() bool { return g.why != "" }

// gitWords reports whether a command runs git and returns its words with
// a dashed name of git's own spelled out: `git-receive-pack x` (as git's
// exec path and PATH hold it) is `git receive-pack x`.
func gitWords(words []arg) ([]arg, bool) {
	if len(words) == 0 || !words[0].known {
		return nil, false
	}
	base := path.Base(words[0].value)
	if base == "git" {
		return words, true
	}
	if sub, ok := strings.CutPrefix(base, "git-"); ok && gitBuiltins()[sub] {
		// Only git's own programs: git-lfs or git-cliff run by their
		// own name are programs of their own, no alias of git's.
		return append([]arg{{value: "git", known: true, plain: true}, {value: sub, known: true, plain: true}}, words[1:]...), true
	}
	return nil, false
}

// judgeGit reads a git command line (words as gitWords gives them) the
// way git does: its global options, the subcommand, and what the
// subcommand's own options hand it to run. env, when not "", is why the command's
// environment may steer git (GIT_CONFIG_* and the like, set inline or
// exported earlier in the line).
func judgeGit(words []arg, env string) gitAct {
	g := gitAct{at: -1, why: env}
	if len(words) == 0 {
		return g
	}
	// reason keeps the first reason found.
	reason := func(format string, args ...any) {
		if g.why == "" || g.alias {
			g.why, g.alias = fmt.Sprintf(format, args...), false
		}
	}
	i := gitOptions(words, &g, reason)
	if i >= len(words) {
		return g
	}
	g.at = i
	w := words[i]
	if !w.known {
		reason("its subcommand is computed")
		return g
	}
	g.sub = w.value
	g.does = gitDoes[g.sub]
	args := words[i+1:]
	switch why, runs := gitRuns[g.sub]; {
	case runs:
		reason("`git %s` %s", g.sub, why)
	case !gitBuiltins()[g.sub]:
		if g.why == "" {
			g.why, g.alias = fmt.Sprintf("`%s` is not one of git's own commands, so it may be an alias for any of them", g.sub), true
		}
	}
	switch g.sub {
	case "submodule":
		if len(args) > 0 && args[0].value == "foreach" {
			reason("`git submodule foreach` runs a command in every submodule")
			g.shells = append(g.shells, shellOf(args[1:]))
		}
	case "bisect":
		if len(args) > 0 && args[0].value == "run" {
			reason("`git bisect run` runs a command at every step")
			g.shells = append(g.shells, shellOf(args[1:]))
		}
	}
	for j := 0; j < len(args); j++ {
		x := args[j]
		v := x.value
		switch {
		case !x.known:
		case anyOption(v, programOptions...):
			reason("its option %s runs another program", v)
		case v == "-c" || anyOption(v, "--config", "--template"):
			reason("`git %s %s` sets git configuration or hooks, which can run programs", g.sub, v)
		case g.sub == "rebase" && strings.HasPrefix(v, "-x"):
			reason("`git rebase %s` runs a command at every step", v)
			if cmd := strings.TrimPrefix(v, "-x"); cmd != "" {
				g.shells = append(g.shells, cmd)
			} else if j+1 < len(args) && args[j+1].known {
				g.shells = append(g.shells, args[j+1].value)
			}
		case g.sub == "grep" && strings.HasPrefix(v, "-O"):
			reason("`git grep %s` runs another program", v)
		case g.sub == "clone" && v == "-u":
			reason("`git clone -u` runs another program")
		case strings.HasPrefix(v, "ext::") || strings.HasPrefix(v, "fd::"):
			reason("the remote %s is a command git runs", v)
		}
		if anyOption(v, "--exec") && g.sub == "rebase" {
			if _, cmd, ok := strings.Cut(v, "="); ok {
				g.shells = append(g.shells, cmd)
			} else if j+1 < len(args) && args[j+1].known {
				g.shells = append(g.shells, args[j+1].value)
			}
		}
	}
	return g
}

// gitOptions judges git's options before its subcommand, words[0] being
// git itself, through reason. It returns the subcommand's index, or
// len(words) when there is none to judge (a computed word comes first).
func gitOptions(words []arg, g *gitAct, reason func(format string, args ...any)) int {
	i := 1
	for ; i < len(words); i++ {
		w := words[i]
		if !w.known {
			reason("a word before its subcommand is computed")
			return len(words)
		}
		v := w.value
		if !strings.HasPrefix(v, "-") {
			break
		}
		name, _, hasValue := strings.Cut(v, "=")
		switch {
		case v == "-c":
			i++
			if i >= len(words) {
				return i
			}
			judgeGitConfig(g, words[i], reason)
		case name == "--config-env":
			reason("%s takes a setting from an environment variable", v)
			if !hasValue {
				i++
			}
		case name == "--exec-path" && hasValue:
			reason("%s makes git run its commands from another directory", v)
		case name == "--git-dir" || name == "--shallow-file":
			reason("%s reads another repository's settings", v)
			if !hasValue {
				i++
			}
		case v == "-C" || !hasValue && (name == "--work-tree" || name == "--namespace" || name == "--super-prefix" || name == "--attr-source"):
			i++ // the value is a directory or a name, not a program
		case gitPlainOptions[name]:
		default:
			reason("git's option %s is not one ralph knows", v)
		}
	}
	return i
}

// judgeGitConfig judges one `-c key=value`: a setting ralph knows to be
// harmless changes nothing; any other may name a program or an alias.
func judgeGitConfig(g *gitAct, kv arg, reason func(string, ...any)) {
	if !kv.known {
		reason("a -c setting is computed")
		return
	}
	key, value, _ := strings.Cut(kv.value, "=")
	lower := strings.ToLower(key)
	if name, ok := strings.CutPrefix(lower, "alias."); ok {
		reason("-c %s makes `git %s` an alias", key, name)
		if cmd, ok := strings.CutPrefix(value, "!"); ok {
			g.shells = append(g.shells, cmd)
		}
		return
	}
	if !harmlessGitSetting(lower) && !(editorOrPager[lower] && harmlessProgram[value]) {
		reason("-c %s may name a program or change what git runs", key)
	}
}

// harmlessGitSetting reports a setting (lower case) that names no
// program, alias, remote, file or transport: colours, identity, output.
func harmlessGitSetting(key string) bool {
	section, _, _ := strings.Cut(key, ".")
	switch section {
	case "user", "color", "advice", "i18n", "column":
		return true
	}
	switch key {
	case "core.quotepath", "core.autocrlf", "core.safecrlf", "core.abbrev", "core.filemode", "core.ignorecase",
		"init.defaultbranch", "safe.directory", "log.date", "log.decorate", "pull.rebase", "pull.ff",
		"merge.conflictstyle", "diff.noprefix", "diff.mnemonicprefix", "diff.renames", "diff.algorithm",
		"diff.colormoved", "commit.gpgsign", "tag.gpgsign", "format.pretty", "protocol.version", "fetch.prune",
		"gc.auto", "maintenance.auto", "rebase.autosquash", "rebase.autostash", "rerere.enabled",
		"status.showuntrackedfiles", "status.short", "status.branch", "checkout.defaultremote":
		return true
	}
	return false
}

// lineGitEnv reports why a line may hand git a steering environment
// (gitEnvSteers) before one of its git commands runs: a variable set or
// exported anywhere in it, a variable read into one, a file sourced, an
// eval that may do any of these. It returns "" when nothing does.
func lineGitEnv(f *syntax.File, depth int) string {
	why := ""
	named := func(name, value string, known bool) {
		if why == "" && gitEnvSteers(name, value, known) {
			why = gitEnvReason(name)
		}
	}
	a := &analyzer{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			switch {
			case n.Name != nil:
				value := arg{known: true}
				if n.Value != nil {
					value = a.argValue(n.Value)
				}
				named(n.Name.Value, value.value, value.known && n.Array == nil && !n.Append)
			case n.Value != nil:
				// declare/export's words: an option, a name, or a word
				// ralph cannot read.
				x := a.argValue(n.Value)
				name, value, _ := strings.Cut(x.value, "=")
				switch {
				case !x.known:
					why = "a variable ralph cannot name is exported"
				case !strings.HasPrefix(name, "-"):
					named(name, value, true)
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			words := a.ruleWords(n.Args)
			if len(words) == 0 {
				return true
			}
			switch name := path.Base(words[0].value); name {
			case "source", ".":
				why = "a sourced file may set git's environment"
			case "eval":
				inner, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(joinWords(words[1:])), "")
				switch {
				case err != nil || depth >= maxNesting || !allKnown(words[1:]):
					why = "an eval may set git's environment"
				default:
					why = lineGitEnv(inner, depth+1)
				}
			case "read", "mapfile", "readarray", "getopts", "export", "declare", "typeset":
				// Builtins that set a variable named in their words, to a
				// value ralph does not know.
				for _, x := range words[1:] {
					n, _, _ := strings.Cut(x.value, "=")
					named(n, "", false)
				}
			case "printf":
				for i, x := range words[1:] {
					if v, ok := strings.CutPrefix(x.value, "-v"); ok {
						if v == "" && i+2 < len(words) {
							v = words[i+2].value
						}
						named(v, "", false)
					}
				}
			}
		}
		return true
	})
	return why
}

func allKnown(words []arg) bool {
	for _, w := range words {
		if !w.known {
			return false
		}
	}
	return true
}

// gitEnvSteers reports an environment variable that changes which
// settings, programs or repository git uses: GIT_CONFIG_* (aliases),
// GIT_CONFIG_GLOBAL/SYSTEM, GIT_DIR, GIT_EXEC_PATH, GIT_SSH_COMMAND and the
// rest of GIT_*, except those ralph knows change only output, identity or
// tracing; and HOME, XDG_CONFIG_HOME and PATH, which say where git finds
// the person's config and its extensions.
func gitEnvSteers(name, value string, known bool) bool {
	if editorOrPager[name] && known && harmlessProgram[value] {
		return false
	}
	switch name {
	case "HOME", "XDG_CONFIG_HOME", "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH":
		return true
	}
	rest, ok := strings.CutPrefix(name, "GIT_")
	if !ok {
		return false
	}
	switch {
	case strings.HasPrefix(rest, "TRACE"), strings.HasPrefix(rest, "AUTHOR_"), strings.HasPrefix(rest, "COMMITTER_"):
		return false
	}
	switch rest {
	case "TERMINAL_PROMPT", "OPTIONAL_LOCKS", "FLUSH", "LITERAL_PATHSPECS", "GLOB_PATHSPECS", "NOGLOB_PATHSPECS",
		"ICASE_PATHSPECS", "REDACT_COOKIES", "ADVICE", "MERGE_VERBOSITY", "CONFIG_NOSYSTEM", "PROGRESS_DELAY",
		"NO_REPLACE_OBJECTS", "QUARANTINE_PATH":
		return false
	}
	return true
}

// editorOrPager are the settings and variables that name git's editor or
// pager, which agents set to a harmless program (GIT_EDITOR=true,
// GIT_PAGER=cat) so that git waits for nobody.
var editorOrPager = map[string]bool{
	"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "GIT_PAGER": true,
	"core.editor": true, "sequence.editor": true, "core.pager": true,
}

// harmlessProgram are the editors and pagers that run nothing else.
var harmlessProgram = map[string]bool{"": true, "true": true, ":": true, "cat": true, "less": true, "more": true}

// gitEnvReason is judgeGit's env for a variable that steers git.
func gitEnvReason(name string) string {
	return fmt.Sprintf("%s in its environment changes what git runs", name)
}

// shellOf is the shell command git builds from arguments (submodule
// foreach, bisect run): the words joined by spaces.
func shellOf(args []arg) string {
	s := make([]string, 0, len(args))
	for _, a := range args {
		if !a.known {
			return ""
		}
		s = append(s, a.value)
	}
	return strings.Join(s, " ")
}

// gitPlainOptions are git's global options that take no program, no
// settings and no other repository.
var gitPlainOptions = map[string]bool{
	"-p": true, "--paginate": true, "-P": true, "--no-pager": true, "--bare": true, "--no-replace-objects": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true,
	"--no-optional-locks": true, "--no-advice": true, "--work-tree": true, "--namespace": true,
	"--super-prefix": true, "--attr-source": true, "--exec-path": true, "--html-path": true, "--man-path": true,
	"--info-path": true, "--list-cmds": true, "-v": true, "--version": true, "-h": true, "--help": true,
}

// gitDoes maps git's plumbing (and commands that do another's work) to
// the porcelain a person names in a pattern: `git send-pack` pushes.
var gitDoes = map[string][]string{
	"send-pack": {"push"}, "http-push": {"push"}, "receive-pack": {"push"},
	"fetch-pack": {"fetch"}, "http-fetch": {"fetch"}, "upload-pack": {"fetch"},
	"pull": {"fetch", "merge", "rebase"}, "maintenance": {"fetch", "gc"},
	"commit-tree": {"commit"}, "mktag": {"tag"}, "update-ref": {"branch", "tag", "reset"},
	"symbolic-ref": {"checkout", "switch"}, "read-tree": {"checkout", "reset"}, "checkout-index": {"checkout", "restore"},
	"update-index": {"add", "rm"}, "stage": {"add"}, "init-db": {"init"}, "fsck-objects": {"fsck"},
	"annotate": {"blame"}, "pickaxe": {"blame"}, "merge-recursive": {"merge"}, "merge-tree": {"merge"},
	"merge-index": {"merge"}, "merge-file": {"merge"}, "merge-octopus": {"merge"}, "merge-resolve": {"merge"},
	"merge-subtree": {"merge"}, "merge-ours": {"merge"}, "merge-recursive-ours": {"merge"},
	"merge-recursive-theirs": {"merge"}, "merge-one-file": {"merge"}, "upload-archive": {"archive"},
	"pack-refs": {"gc"}, "prune": {"gc"}, "repack": {"gc"}, "prune-packed": {"gc"},
}

// gitRuns are git's commands that run commands or programs of their own
// choosing, or speak a remote protocol read from their input: each may
// do what any git command does.
var gitRuns = map[string]string{
	"filter-branch": "runs commands of its own", "difftool": "runs other programs", "mergetool": "runs other programs",
	"for-each-repo": "runs a git command in other repositories", "hook": "runs git hooks",
	"remote-ext": "runs a command as a remote", "remote-fd": "speaks a remote protocol from its input",
	"remote-http": "speaks a remote protocol from its input", "remote-https": "speaks a remote protocol from its input",
	"remote-ftp": "speaks a remote protocol from its input", "remote-ftps": "speaks a remote protocol from its input",
	"instaweb": "starts a web server", "daemon": "serves the repository to the network", "shell": "runs the commands it is given",
}

// gitBuiltins are git's own commands: those git 2.39 lists with
// `git --list-cmds=main` (built in, or shipped in its exec path), which
// git runs before it looks for an alias, so no alias can stand in for
// them, built at the first look (a table of 150 built at every start
// was init work). Internal helpers (names with "--") and commands git plans to drop
// are left out: where one is missing it may be an alias. A newer git's
// new commands count as possible aliases, which only asks more.
var gitBuiltins = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`add am apply archive bisect blame branch bugreport bundle cat-file
		check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean
		clone column commit commit-graph commit-tree config count-objects credential credential-cache
		credential-store daemon describe diagnose diff diff-files diff-index diff-tree difftool fast-export
		fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck
		fsck-objects gc get-tar-commit-id grep hash-object help hook http-backend http-fetch http-push
		imap-send index-pack init init-db instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo
		mailsplit maintenance merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours
		merge-recursive merge-recursive-ours merge-recursive-theirs merge-resolve merge-subtree merge-tree
		mergetool mktag mktree multi-pack-index mv name-rev notes pack-objects pack-refs patch-id prune
		prune-packed pull push quiltimport range-diff read-tree rebase receive-pack reflog remote remote-ext
		remote-fd remote-ftp remote-ftps remote-http remote-https repack replace request-pull rerere reset
		restore rev-list rev-parse revert rm send-pack shortlog show show-branch show-index show-ref
		sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag unpack-file
		unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit
		verify-pack verify-tag version worktree write-tree annotate pickaxe`) {
		m[c] = true
	}
	return m
})
