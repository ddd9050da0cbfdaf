package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

// The Seatbelt profile cannot run here, so these tests read it: a small
// evaluator of the part of SBPL the profile uses (deny default, allow
// rules whose filters are subpath, literal, regex, require-all/any/not and
// the socket filters) answers what a command may do, and the tests ask it
// what the Linux sandbox answers for the same policy.

// sexp is an SBPL expression: a symbol, a string or a list.
type sexp struct {
	sym, str string
	isStr    bool
	list     []sexp
}

func parseSBPL(t *testing.T, src string) []sexp {
	t.Helper()
	var out []sexp
	i := 0
	var parse func() sexp
	skip := func() {
		for i < len(src) {
			switch {
			case src[i] == ';':
				for i < len(src) && src[i] != '\n' {
					i++
				}
			case strings.ContainsRune(" \t\n", rune(src[i])):
				i++
			default:
				return
			}
		}
	}
	parse = func() sexp {
		skip()
		switch {
		case src[i] == '(':
			i++
			var e sexp
			for skip(); src[i] != ')'; skip() {
				e.list = append(e.list, parse())
			}
			i++
			return e
		case src[i] == '"' || strings.HasPrefix(src[i:], `#"`):
			raw := src[i] == '#'
			if raw {
				i++
			}
			i++
			var b strings.Builder
			for src[i] != '"' {
				if src[i] == '\\' && !raw {
					i++
				}
				b.WriteByte(src[i])
				i++
			}
			i++
			return sexp{str: b.String(), isStr: true}
		default:
			j := i
			for i < len(src) && !strings.ContainsRune(" \t\n()", rune(src[i])) {
				i++
			}
			return sexp{sym: src[j:i]}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("the profile does not parse at byte %d: %v\n%s", i, r, src)
		}
	}()
	for skip(); i < len(src); skip() {
		out = append(out, parse())
	}
	return out
}

// sbRequest is one thing a command does: an operation on a path, or a
// connect to an IP address (path "") or to a named Unix socket.
type sbRequest struct {
	op   string // file-write-create, file-read-data, network-outbound, network-bind
	path string
	unix bool
}

// allowedBy reports whether the parsed profile allows r.
func allowedBy(t *testing.T, rules []sexp, r sbRequest) bool {
	t.Helper()
	if len(rules) < 2 || rules[1].list[0].sym != "deny" || rules[1].list[1].sym != "default" {
		t.Fatal("the profile does not start by denying everything")
	}
	for _, rule := range rules[2:] {
		if rule.list[0].sym == "deny" {
			t.Fatalf("a deny rule makes the profile depend on rule order: %v", rule)
		}
		if rule.list[0].sym != "allow" {
			continue
		}
		var filters []sexp
		opMatch := false
		for _, e := range rule.list[1:] {
			if e.sym == "" {
				filters = append(filters, e)
				continue
			}
			if e.sym == r.op || strings.HasSuffix(e.sym, "*") && strings.HasPrefix(r.op, strings.TrimSuffix(e.sym, "*")) {
				opMatch = true
			}
		}
		if !opMatch {
			continue
		}
		if len(filters) == 0 {
			return true
		}
		for _, f := range filters {
			if match(t, f, r) {
				return true
			}
		}
	}
	return false
}

func match(t *testing.T, f sexp, r sbRequest) bool {
	t.Helper()
	args := f.list[1:]
	switch f.list[0].sym {
	case "require-all":
		for _, a := range args {
			if !match(t, a, r) {
				return false
			}
		}
		return true
	case "require-any":
		for _, a := range args {
			if match(t, a, r) {
				return true
			}
		}
		return false
	case "require-not":
		return !match(t, args[0], r)
	case "subpath":
		return !r.unix && r.path != "" && (r.path == args[0].str || strings.HasPrefix(r.path, args[0].str+"/"))
	case "literal", "path-literal":
		return r.path != "" && r.path == args[0].str
	case "regex", "path-regex":
		re, err := regexp.Compile(args[0].str)
		if err != nil {
			t.Fatalf("bad regex %q: %v", args[0].str, err)
		}
		return r.path != "" && re.MatchString(r.path)
	case "remote", "local":
		switch args[0].sym {
		case "ip":
			return r.path == ""
		case "unix-socket":
			return r.unix && match(t, args[1], sbRequest{path: r.path})
		}
	}
	return false // global-name, target: not asked about here
}

// profileAllows builds p's profile and answers r with it.
func profileAllows(t *testing.T, p *Policy, r sbRequest) bool {
	t.Helper()
	return allowedBy(t, parseSBPL(t, SeatbeltProfile(p)), r)
}

func write(path string) sbRequest { return sbRequest{op: "file-write-create", path: path} }

func TestSeatbeltProfileWorkspaceWrite(t *testing.T) {
	const root = "/Users/me/proj"
	p := &Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{"/private/var/folders/xy/T"}, Network: true}
	for _, c := range []struct {
		path string
		want bool
	}{
		{root + "/main.go", true},
		{root + "/src/deep/new.txt", true},
		{root, true},
		{root + "/.gitignore", true},
		{root + "/.ralphrc", true},
		{root + "/.git/index", true},
		{root + "/.git/objects/ab/cdef", true},
		{"/private/var/folders/xy/T/build.o", true},
		// Outside the project and the temporary directory.
		{"/Users/me/.zshrc", false},
		{"/Users/me/proj2/x", false},
		{"/Users/me/projx", false},
		{"/etc/hosts", false},
		{"/private/var/folders/xy/Tother", false},
		// What git or ralph would act on outside the sandbox, in any case.
		{root + "/.git/hooks/pre-commit", false},
		{root + "/.git/hooks", false},
		{root + "/.git/config", false},
		{root + "/.GIT/config", false},
		{root + "/.Git/Hooks/post-checkout", false},
		{root + "/.git/commondir", false},
		{root + "/.git/config.worktree", false},
		{root + "/.ralph", false},
		{root + "/.ralph/config.toml", false},
		{root + "/.RALPH/allowed", false},
		// .git may be written in, not replaced.
		{root + "/.git", false},
	} {
		if got := profileAllows(t, p, write(c.path)); got != c.want {
			t.Errorf("write %s: allowed %v, want %v", c.path, got, c.want)
		}
		// The same as Linux's policy, except that a Mac's file system
		// folds case, so the profile does too.
		rest := strings.TrimPrefix(c.path, root)
		if got, linux := profileAllows(t, p, write(c.path)), p.writable(c.path); got != linux && rest == strings.ToLower(rest) {
			t.Errorf("write %s: the profile says %v, Linux's policy %v", c.path, got, linux)
		}
	}
	for _, path := range []string{"/etc/hosts", root + "/.git/config", "/Users/me/.ssh/id_ed25519.pub"} {
		if !profileAllows(t, p, sbRequest{op: "file-read-data", path: path}) {
			t.Errorf("read %s: refused; reading is allowed everywhere", path)
		}
	}
}

// Issue 88, cause 5: every session's private temporary directory lies
// in the temporary directory, which commands may write; a session's
// commands write their own and no other session's, whether or not this
// session has one, and the rest of the temporary directory as before.
func TestSeatbeltProfileOwnPrivateTempOnly(t *testing.T) {
	const tmp = "/private/var/folders/xy/T"
	for _, own := range []string{"", tmp + "/ralph-tmp-0123456789abcdef"} {
		p := &Policy{Mode: WorkspaceWrite, Root: "/Users/me/proj", Writable: []string{tmp}, tempDirs: []string{tmp}}
		if own != "" {
			p.SetPrivateTemp(own)
		}
		cases := map[string]bool{
			tmp + "/build.o":                            true,
			tmp + "/ralph-tmp-fedcba9876543210":         false,
			tmp + "/ralph-tmp-fedcba9876543210/index":   false,
			tmp + "/ralph-tmp-fedcba9876543210/a/b.txt": false,
			tmp + "/ralph-tmp-new":                      false,
			tmp + "/sub/ralph-tmp-x":                    true, // not a session's: those lie directly in the temporary directory
		}
		if own != "" {
			cases[own+"/go-build/x.a"] = true
			cases[own+"/ralph-hook-1/index"] = true
		}
		for path, want := range cases {
			if got := profileAllows(t, p, write(path)); got != want {
				t.Errorf("own %q: write %s: allowed %v, want %v", own, path, got, want)
			}
			if linux := p.writable(path); linux != want {
				t.Errorf("own %q: write %s: Linux's policy says %v, want %v", own, path, linux, want)
			}
		}
	}
}

// A linked worktree's git writes in the main repository's directories,
// but not its hooks or config.
func TestSeatbeltProfileWorktree(t *testing.T) {
	p := &Policy{Mode: WorkspaceWrite, Root: "/Users/me/wt", gitWrite: []string{"/Users/me/main/.git"},
		gitGuard: []string{"/Users/me/main/.git/hooks", "/Users/me/main/.git/config"}}
	for path, want := range map[string]bool{
		"/Users/me/main/.git/objects/ab/cd":      true,
		"/Users/me/main/.git/worktrees/wt/index": true,
		"/Users/me/main/.git/hooks/pre-commit":   false,
		"/Users/me/main/.git/config":             false,
		"/Users/me/main/src.go":                  false,
		"/Users/me/wt/.git":                      false,
		"/Users/me/wt/file.go":                   true,
	} {
		if got := profileAllows(t, p, write(path)); got != want {
			t.Errorf("write %s: allowed %v, want %v", path, got, want)
		}
	}
}

func TestSeatbeltProfileReadOnly(t *testing.T) {
	p := &Policy{Mode: ReadOnly, Root: "/Users/me/proj", Network: true}
	for _, path := range []string{"/Users/me/proj/main.go", "/Users/me/proj", "/private/tmp/x"} {
		if profileAllows(t, p, write(path)) {
			t.Errorf("write %s allowed in read-only", path)
		}
	}
	if !profileAllows(t, p, sbRequest{op: "file-write-data", path: "/dev/null"}) {
		t.Error("writing /dev/null is refused")
	}
	if !profileAllows(t, p, sbRequest{op: "file-read-data", path: "/Users/me/proj/main.go"}) {
		t.Error("reading is refused in read-only")
	}
}

func TestSeatbeltProfileNetwork(t *testing.T) {
	for _, network := range []bool{true, false} {
		p := &Policy{Mode: WorkspaceWrite, Root: "/Users/me/proj", Writable: []string{"/private/tmp"}, Network: network}
		p.AllowUnixSockets("/var/run/docker.sock")
		for _, c := range []struct {
			what string
			r    sbRequest
			want bool
		}{
			{"connect to an address", sbRequest{op: "network-outbound"}, network},
			{"listen on an address", sbRequest{op: "network-bind"}, network},
			// Named sockets follow the Linux rules, network or not.
			{"a socket in the project", sbRequest{op: "network-outbound", path: "/Users/me/proj/run/db.sock", unix: true}, true},
			{"a socket the command made in temp", sbRequest{op: "network-outbound", path: "/private/tmp/test.sock", unix: true}, true},
			{"binding a socket in the project", sbRequest{op: "network-bind", path: "/Users/me/proj/s.sock", unix: true}, true},
			{"ralph's control socket", sbRequest{op: "network-outbound", path: "/Users/me/proj/.ralph/control.sock", unix: true}, false},
			{"binding in .ralph", sbRequest{op: "network-bind", path: "/Users/me/proj/.ralph/x.sock", unix: true}, false},
			{"the ssh agent", sbRequest{op: "network-outbound", path: "/private/var/run/com.apple.launchd.x/Listeners", unix: true}, false},
			{"an allowed socket", sbRequest{op: "network-outbound", path: "/var/run/docker.sock", unix: true}, true},
			{"binding outside", sbRequest{op: "network-bind", path: "/Users/me/other.sock", unix: true}, false},
		} {
			if got := profileAllows(t, p, c.r); got != c.want {
				t.Errorf("network %v, %s: allowed %v, want %v", network, c.what, got, c.want)
			}
		}
	}
}

// Paths are data in the profile: quotes, backslashes and regular
// expression characters in them neither break it nor widen it.
func TestSeatbeltProfileQuotesPaths(t *testing.T) {
	root := `/Users/me/a "b" \c+(d)[e].*`
	p := &Policy{Mode: WorkspaceWrite, Root: root, Writable: []string{"/private/tmp"}}
	for path, want := range map[string]bool{
		root + "/x":                             true,
		root + "/.git/config":                   false,
		root + "/.ralph/r":                      false,
		`/Users/me/a "b" \c+(d)`:                false,
		`/Users/me/a "b" \cc+(d)[e].*/x`:        false,
		`/Users/me/a "b" \c+(d)[e]XY/x`:         false,
		`/Users/me/a "b" \c+(d)e.*/.git/config`: false,
	} {
		if got := profileAllows(t, p, write(path)); got != want {
			t.Errorf("write %q: allowed %v, want %v", path, got, want)
		}
	}
	if profileAllows(t, p, sbRequest{op: "network-outbound", path: root + "/.ralph/control.sock", unix: true}) {
		t.Error("the control socket is reachable under a root with special characters")
	}
}

// The profile is built from the policy a session uses, so what New makes
// for this machine is what the tests above cover.
func TestSeatbeltProfileFromNew(t *testing.T) {
	root := realDir(t)
	p, err := New(WorkspaceWrite, root, false)
	if err != nil {
		t.Fatal(err)
	}
	prof := SeatbeltProfile(p)
	if !profileAllows(t, p, write(root+"/f")) || profileAllows(t, p, write(root+"/.ralph/f")) {
		t.Errorf("profile of New's policy:\n%s", prof)
	}
	if strings.Count(prof, "(deny default)") != 1 {
		t.Errorf("profile does not deny by default once:\n%s", prof)
	}
}

// TestSeatbeltProfileHidesSecrets: the secret paths cannot be read, their
// metadata can, and everything else reads as before.
func TestSeatbeltProfileHidesSecrets(t *testing.T) {
	p := &Policy{Mode: WorkspaceWrite, Root: "/Users/me/proj", HiddenPaths: []string{"/Users/me/.ssh", "/Users/me/.netrc", "/Users/me/dotfiles/aws/credentials"}}
	for path, want := range map[string]bool{
		"/Users/me/.ssh/id_ed25519":          false,
		"/Users/me/.ssh":                     false,
		"/Users/me/.netrc":                   false,
		"/Users/me/dotfiles/aws/credentials": false,
		"/Users/me/dotfiles/aws/config":      true,
		"/Users/me/.sshrc":                   true,
		"/Users/me/proj/main.go":             true,
		"/etc/hosts":                         true,
	} {
		if got := profileAllows(t, p, sbRequest{op: "file-read-data", path: path}); got != want {
			t.Errorf("read %s: allowed %v, want %v", path, got, want)
		}
	}
	if !profileAllows(t, p, sbRequest{op: "file-read-metadata", path: "/Users/me/.ssh/id_ed25519"}) {
		t.Error("a secret's metadata cannot be read: listing its directory fails")
	}
}
