package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// SeatbeltProfile is the macOS sandbox profile (SBPL, what sandbox-exec -p
// takes) for a policy: the same rules as Linux's Landlock and bind mounts,
// as codex and Claude Code confine commands on macOS. It is built here, not
// behind the darwin tag, so that its text is tested everywhere; only
// runner_darwin.go hands it to sandbox-exec.
//
// Everything is denied unless allowed. Reading is allowed everywhere, as on
// Linux. Writing follows Policy.writable: under workspace-write, the root,
// the temporary directories (but the other sessions' private directories
// in them, PrivateTempPrefix), the added directories and a linked
// worktree's git directories, each allowance carrying its own exceptions
// (require-not), so no rule depends on the order Seatbelt weighs rules in.
// The protected names are matched case-insensitively, since a Mac's file
// system usually is: .GIT/config is git's own file there. Without the
// network no IP socket may be used at all: Seatbelt cannot give a command
// a loopback of its own, as Linux's network namespace does, and a
// loopback shared with the machine reaches its other servers. Named Unix
// sockets follow the Linux rules, network or not: those under the root
// (but not .ralph, where ralph's control socket is), those a command could
// have bound itself (where it may write) and those the person allowed.
func SeatbeltProfile(p *Policy) string {
	var b strings.Builder
	b.WriteString(seatbeltBase)
	// What the person's Read(…) deny rules name is denied as the secret
	// files are: Seatbelt's denial holds inside a writable directory too.
	inWrite, elsewhere := p.deniedRead()
	b.WriteString(seatbeltReads(slices.Concat(p.HiddenPaths, inWrite, elsewhere)))
	if p.Mode == WorkspaceWrite {
		b.WriteString("\n; Writes: the project, except what git or ralph would act on outside the sandbox.\n")
		fmt.Fprintf(&b, "(allow file-write*\n  (require-all %s", sbSubpath(p.Root))
		for _, name := range protectedNames {
			fmt.Fprintf(&b, "\n    (require-not %s)", sbFolded(p.Root, name, true))
		}
		// .git itself may be written in, not renamed or removed.
		fmt.Fprintf(&b, "\n    (require-not %s)))\n", sbFolded(p.Root, ".git", false))
		dirs := slices.Concat(p.Writable, p.gitWrite)
		if len(dirs) > 0 {
			b.WriteString("; Writes: the temporary directories, the added ones and a worktree's git directories.\n")
			b.WriteString("(allow file-write*\n  (require-all (require-any")
			for _, d := range dirs {
				fmt.Fprintf(&b, "\n      %s", sbSubpath(d))
			}
			b.WriteString(")")
			for _, g := range p.gitGuard {
				fmt.Fprintf(&b, "\n    (require-not %s)", sbSubpath(g))
			}
			// Every session's private temporary directory lies in the
			// temporary directory; this one's own is allowed apart, below.
			for _, t := range p.tempDirs {
				fmt.Fprintf(&b, "\n    (require-not (regex %s))", sbQuote("^"+reQuote(strings.TrimSuffix(t, "/"))+"/"+reQuote(PrivateTempPrefix)))
			}
			fmt.Fprintf(&b, "\n    (require-not %s)))\n", sbSubpath(p.Root))
		}
		if p.private != "" {
			b.WriteString("; Writes: this session's own private temporary directory, and no other session's.\n")
			fmt.Fprintf(&b, "(allow file-write* %s)\n", sbSubpath(p.private))
		}
	}
	dotRalph := sbQuote("^" + reQuote(p.Root) + "/" + foldRegexp(".ralph") + "(/|$)")
	b.WriteString("\n; Named Unix sockets: in the project (not .ralph), where a command may bind its own, and those allowed.\n")
	b.WriteString("(allow network-outbound\n  (require-all (require-any")
	for _, d := range append([]string{p.Root}, p.unixSocketDirs()...) {
		fmt.Fprintf(&b, "\n      (remote unix-socket (path-regex %s))", sbQuote("^"+reQuote(d)+"(/|$)"))
	}
	for _, s := range p.UnixSockets {
		fmt.Fprintf(&b, "\n      (remote unix-socket (path-literal %s))", sbQuote(s))
	}
	fmt.Fprintf(&b, ")\n    (require-not (remote unix-socket (path-regex %s)))))\n", dotRalph)
	if dirs := p.unixSocketDirs(); len(dirs) > 0 {
		b.WriteString("(allow network-bind network-inbound\n  (require-all (require-any")
		for _, d := range append([]string{p.Root}, dirs...) {
			fmt.Fprintf(&b, "\n      (local unix-socket (path-regex %s))", sbQuote("^"+reQuote(d)+"(/|$)"))
		}
		fmt.Fprintf(&b, ")\n    (require-not (local unix-socket (path-regex %s)))))\n", dotRalph)
	}
	if p.Network {
		b.WriteString("\n; The network.\n")
		b.WriteString("(allow network-outbound (remote ip))\n(allow network-inbound (local ip))\n(allow network-bind (local ip))\n")
		b.WriteString("(allow mach-lookup (global-name \"com.apple.dnssd.service\") (global-name \"com.apple.trustd.agent\"))\n")
	}
	return b.String()
}

// seatbeltReads allows reading everywhere but the secret paths (hidden.go),
// as Landlock's rules do on Linux: each secret is an exception of the one
// allowance (require-not), so no rule depends on the order Seatbelt weighs
// rules in. A secret's metadata stays readable, so that listing a
// directory that holds one (ls -l ~) works, as on Linux.
func seatbeltReads(secrets []string) string {
	if len(secrets) == 0 {
		return "(allow file-read*)\n"
	}
	var b strings.Builder
	b.WriteString("; Reading: everywhere but the secret files.\n(allow file-read-metadata)\n(allow file-read*\n  (require-all")
	for _, s := range secrets {
		fmt.Fprintf(&b, "\n    (require-not %s)", sbSubpath(s))
	}
	b.WriteString("))\n")
	return b.String()
}

// seatbeltBase is what every command may do: run programs, read files
// (seatbeltReads), use a terminal and the few system services the standard tools ask for.
// Signals and process information reach only processes of the same
// sandbox.
const seatbeltBase = `(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow file-ioctl)
(allow sysctl-read)
(allow system-socket)
(allow ipc-posix-sem)
(allow ipc-posix-shm*)
(allow pseudo-tty)
(allow file-write-data
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/ptmx")
  (regex #"^/dev/fd/") (regex #"^/dev/ttys[0-9]+$"))
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
`

// unixSocketDirs are the directories outside the root where a command may
// bind a socket of its own: those it may write.
func (p *Policy) unixSocketDirs() []string {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	return slices.Concat(p.Writable, p.gitWrite)
}

// sbSubpath matches dir and everything beneath it.
func sbSubpath(dir string) string { return "(subpath " + sbQuote(dir) + ")" }

// sbFolded matches root/name (a relative path with slashes), its letters in
// either case, and with sub everything beneath it too.
func sbFolded(root, name string, sub bool) string {
	end := "$"
	if sub {
		end = "(/|$)"
	}
	return "(regex " + sbQuote("^"+reQuote(root)+"/"+foldRegexp(name)+end) + ")"
}

// foldRegexp spells name as a regular expression whose letters match
// either case.
func foldRegexp(name string) string {
	var b strings.Builder
	for _, r := range name {
		lo, up := strings.ToLower(string(r)), strings.ToUpper(string(r))
		if lo != up {
			b.WriteString("[" + lo + up + "]")
			continue
		}
		b.WriteString(reQuote(string(r)))
	}
	return b.String()
}

// reQuote quotes s for a POSIX extended regular expression, which is what
// SBPL's regex takes.
func reQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sbQuote writes s as an SBPL string literal.
func sbQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
