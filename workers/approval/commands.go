package approval

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// launchers are programs whose first argument says what they do ("go
// test" versus "go run", "npm run" versus "npm publish"), so their rule is
// their first two words rather than the program alone.
var launchers = map[string]bool{
	"go": true, "npm": true, "npx": true, "pnpm": true, "yarn": true, "bun": true, "cargo": true, "rustup": true,
	"git": true, "hg": true, "svn": true, "gh": true, "docker": true, "podman": true, "kubectl": true, "helm": true,
	"make": true, "just": true, "cmake": true, "ninja": true, "pip": true, "pip3": true, "uv": true, "uvx": true,
	"poetry": true, "pipenv": true, "bundle": true, "rake": true, "mvn": true, "mvnw": true, "gradle": true,
	"gradlew": true, "dotnet": true, "python": true, "python3": true, "node": true, "deno": true, "mix": true,
	"swift": true, "composer": true, "terraform": true,
}

// Reasons shared by the commands no rule ever covers.
const (
	runsCommand  = "runs another command given in its arguments, so no rule for it can say what runs"
	runsShell    = "is a shell, which can run anything"
	runsProgram  = "runs a program written in its arguments"
	changesShell = "changes how the shell runs later commands"
	actsBeyond   = "acts beyond the project (other processes, users, services or machines)"
	asAnother    = "runs commands as another user"
)

// neverRules are commands that are asked about every time: what they do
// is decided by text in their arguments (a command, a program, a script)
// or reaches beyond the project, so a rule naming them would approve
// anything.
var neverRules = map[string]string{
	"sh": runsShell, "bash": runsShell, "zsh": runsShell, "dash": runsShell, "ksh": runsShell, "mksh": runsShell,
	"fish": runsShell, "csh": runsShell, "tcsh": runsShell, "busybox": runsShell,
	"eval": runsCommand, "exec": runsCommand, "source": runsCommand, ".": runsCommand, "command": runsCommand,
	"builtin": runsCommand, "env": runsCommand, "xargs": runsCommand, "nohup": runsCommand, "timeout": runsCommand,
	"nice": runsCommand, "ionice": runsCommand, "stdbuf": runsCommand, "setsid": runsCommand, "chroot": runsCommand,
	"unshare": runsCommand, "nsenter": runsCommand, "flock": runsCommand, "watch": runsCommand, "parallel": runsCommand,
	"script": runsCommand, "strace": runsCommand, "ltrace": runsCommand, "gdb": runsCommand, "valgrind": runsCommand,
	"firejail": runsCommand, "systemd-run": runsCommand, "chrt": runsCommand, "taskset": runsCommand,
	"unbuffer": runsCommand, "expect": runsCommand, "time": runsCommand, "coproc": runsCommand,
	"sudo": asAnother, "doas": asAnother, "su": asAnother, "runuser": asAnother, "pkexec": asAnother,
	"awk": runsProgram, "gawk": runsProgram, "mawk": runsProgram, "nawk": runsProgram, "perl": runsProgram,
	"ruby": runsProgram, "php": runsProgram, "lua": runsProgram, "luajit": runsProgram, "tclsh": runsProgram,
	"sed": runsProgram, "ed": runsProgram, "ex": runsProgram, "vi": runsProgram, "vim": runsProgram,
	"nvim": runsProgram, "emacs": runsProgram, "dc": runsProgram,
	"alias": changesShell, "unalias": changesShell, "enable": changesShell, "hash": changesShell, "set": changesShell,
	"shopt": changesShell, "trap": changesShell, "export": changesShell, "declare": changesShell,
	"typeset": changesShell, "local": changesShell, "readonly": changesShell, "unset": changesShell,
	"pushd": changesShell, "popd": changesShell, "read": changesShell, "mapfile": changesShell,
	"readarray": changesShell, "getopts": changesShell,
	"kill": actsBeyond, "pkill": actsBeyond, "killall": actsBeyond, "crontab": actsBeyond, "at": actsBeyond,
	"batch": actsBeyond, "shutdown": actsBeyond, "reboot": actsBeyond, "halt": actsBeyond, "poweroff": actsBeyond,
	"systemctl": actsBeyond, "service": actsBeyond, "launchctl": actsBeyond, "mount": actsBeyond,
	"umount": actsBeyond, "chsh": actsBeyond, "passwd": actsBeyond, "ssh": actsBeyond,
}

// programOptions are options that make many programs run another
// program: tar's --to-command, sort's --compress-program, git's
// --upload-pack, rsync's --rsh and the like.
var programOptions = []string{
	"--exec", "--to-command", "--use-compress-program", "--compress-program", "--checkpoint-action",
	"--info-script", "--new-volume-script", "--rsh", "--rsh-command", "--rsync-path", "--upload-pack",
	"--receive-pack", "--ext-diff", "--extcmd", "--script-shell", "--config-env", "--open-files-in-pager",
	"--unzip-command", "--eval",
}

// option reports whether v is option opt, alone or with "=value".
func option(v, opt string) bool { return v == opt || strings.HasPrefix(v, opt+"=") }

func anyOption(v string, opts ...string) bool {
	for _, o := range opts {
		if option(v, o) {
			return true
		}
	}
	return false
}

// special asks about what particular commands can do with particular
// arguments, beyond the path checks every argument gets.
func (a *analyzer) special(base string, args []arg) {
	for _, x := range args {
		if x.known && anyOption(x.value, programOptions...) {
			a.ask("its option %s runs another program", x.value)
		}
	}
	if gw, ok := gitWords(append([]arg{{value: base, known: true, plain: true}}, args...)); ok {
		a.git(gw)
	}
	sub := ""
	if len(args) > 0 {
		sub = args[0].value
	}
	each := func(f func(v string)) {
		for _, x := range args {
			if x.known {
				f(x.value)
			}
		}
	}
	switch base {
	case "rm":
		a.rm(args)
	case "find":
		each(func(v string) {
			switch v {
			case "-exec", "-execdir", "-ok", "-okdir":
				a.ask("`find %s` runs a command on what it finds", v)
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				a.ask("`find %s` deletes or writes files", v)
			}
		})
	case "fd", "fdfind":
		each(func(v string) {
			if anyOption(v, "-x", "-X", "--exec-batch") {
				a.ask("`%s %s` runs a command on what it finds", base, v)
			}
		})
	case "go":
		each(func(v string) {
			if anyOption(v, "-exec", "-toolexec", "--toolexec") {
				a.ask("`go` option %s runs another program", v)
			}
		})
		if sub == "env" {
			each(func(v string) {
				if v == "-w" || v == "-u" {
					a.ask("`go env %s` changes go's settings for every later go command", v)
				}
			})
		}
	case "make":
		each(func(v string) {
			switch {
			case anyOption(v, "-E", "--eval"):
				a.ask("`make %s` evaluates make code from its arguments", v)
			case !strings.HasPrefix(v, "-") && strings.Contains(v, "="):
				a.ask("`make` with a variable (%s) can run any command", v)
			}
		})
	case "npm", "pnpm", "yarn", "bun":
		if sub == "config" {
			a.ask("`%s config` changes settings for every later %s command", base, base)
		}
	case "cargo":
		each(func(v string) {
			if anyOption(v, "--config", "-Z") {
				a.ask("`cargo %s` can make cargo run other programs", v)
			}
		})
	case "tar":
		each(func(v string) {
			if v == "-I" || v == "-F" {
				a.ask("`tar %s` runs another program", v)
			}
		})
	case "rsync", "scp", "sftp", "zip":
		each(func(v string) {
			if v == "-e" && base == "rsync" || anyOption(v, "-o", "-F", "-S") && base != "zip" && base != "rsync" || v == "-TT" && base == "zip" {
				a.ask("`%s %s` runs another program", base, v)
			}
		})
	case "docker", "podman":
		each(func(v string) {
			if anyOption(v, "--privileged", "--cap-add", "--device", "--security-opt", "--pid", "--userns", "--ipc", "--uts") {
				a.ask("`%s %s` gives a container powers beyond the project", base, v)
			}
		})
	case "printf":
		each(func(v string) {
			if strings.HasPrefix(v, "-v") {
				a.ask("`printf -v` sets a variable")
			}
		})
	case "cd":
		a.cd(args)
	}
}

// cd asks about a cd that goes somewhere ralph cannot judge: an option
// (cd - goes back to where the shell was), or not one directory.
func (a *analyzer) cd(args []arg) {
	dirs := 0
	for _, x := range args {
		if x.value == "-" || strings.HasPrefix(x.value, "-") && x.value != "--" {
			a.ask("`cd %s` goes to a directory ralph cannot judge", x.value)
		} else if x.value != "--" {
			dirs++
		}
	}
	if dirs != 1 {
		a.ask("`cd` without one directory in the project goes elsewhere")
	}
}

// rm may be pre-approved with -r, -R or -f only when what it removes is
// inside the project (the path checks) and is not the project itself.
func (a *analyzer) rm(args []arg) {
	forceful, flags := false, true
	for _, x := range args {
		v := x.value
		switch {
		case !flags || !strings.HasPrefix(v, "-") || v == "-":
		case v == "--":
			flags = false
			continue
		case v == "--no-preserve-root":
			a.ask("`rm --no-preserve-root` may remove /")
		case option(v, "--recursive"), option(v, "--force"), !strings.HasPrefix(v, "--") && strings.ContainsAny(v[1:], "rRf"):
			forceful = true
		}
	}
	if !forceful {
		return
	}
	for _, x := range args {
		if x.known && !strings.HasPrefix(x.value, "-") && a.isRoot(x.value) {
			a.ask("`rm` would remove the whole project (%s)", x.value)
		}
	}
}

// gitNever are git subcommands no rule covers although they need not run
// anything: they change git's configuration, handle passwords, or do
// their work through commands of their own only sometimes (submodule
// foreach, bisect run, which judgeGit finds). What else git may run is
// judgeGit's to say.
var gitNever = map[string]string{
	"config": "changes git's configuration, which can make git run programs", "submodule": "can run a command in every submodule",
	"bisect": "can run a command at every step", "credential": "handles passwords",
}

// git asks about a git command (words as gitWords gives them) that no
// rule for its subcommand can vouch for: one in gitNever, or one that may
// do what any git command does (judgeGit). A subcommand that is not
// git's own (an alias, `git lfs`) is covered by a rule that names it,
// which the person gave for exactly that name.
func (a *analyzer) git(words []arg) {
	if len(words) > 1 {
		sub := words[1].value
		if why, ok := gitNever[sub]; ok {
			a.ask("`git %s` %s", sub, why)
			return
		}
	}
	if g := judgeGit(words, ""); g.anything() && !g.alias {
		a.ask("git may run any of its commands here: %s", g.why)
	}
}

// redirect asks when a redirection leads out of the project: writing to
// ~/.bashrc, /etc/x or ../x, or reading from outside it. Duplicating a
// descriptor (2>&1, >&2), here-documents and /dev/null are fine.
func (a *analyzer) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	case syntax.DplIn, syntax.DplOut:
		if v, ok := plainLit(r.Word); ok && (v == "-" || digits(v)) {
			return
		}
	}
	if r.N != nil && !digits(r.N.Value) {
		a.ask("it redirects through a descriptor named by a variable (%s)", r.N.Value)
	}
	x := a.argValue(r.Word)
	if !x.known {
		return // the walk asks about the expansion
	}
	if out, why := a.outside(x.value, x.glob); out {
		verb := "writes to"
		if r.Op == syntax.RdrIn {
			verb = "reads from"
		}
		a.ask("it %s %s, %s", verb, x.value, why)
	}
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
