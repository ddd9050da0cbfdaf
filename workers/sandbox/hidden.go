package sandbox

import (
	"bytes"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/realpath"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// The well-known secret files are kept from sandboxed commands, which may
// otherwise read anywhere: a command that can read ~/.ssh/id_rsa or
// ~/.aws/credentials with the network on can send them away, and one
// that reads ralph's own configuration learns what the person allowed.
// The person lets a command read one with sandbox_readable.

// HiddenPath is one secret file or directory: Home beneath the home
// directory, and Under beneath the directory the variable Env names, when
// it is set to an absolute path (a list of them, for KUBECONFIG); either
// may be empty.
type HiddenPath struct{ Home, Env, Under string }

// hiddenList are the secret paths: keys and the credentials of clouds,
// clusters, registries, databases, password stores and git hosts.
// ~/.npmrc is hidden only when it holds a token (npmrcSecret): npm reads
// its registry settings there for every install.
var hiddenList = []HiddenPath{
	{Home: ".ssh"}, {Home: ".aws"}, {Home: ".gnupg", Env: "GNUPGHOME"}, {Home: ".kube", Env: "KUBECONFIG"},
	{Home: ".netrc"}, {Home: ".git-credentials"}, {Home: ".pypirc"},
	{Home: ".config/gcloud", Env: "XDG_CONFIG_HOME", Under: "gcloud"}, {Home: ".config/gh", Env: "XDG_CONFIG_HOME", Under: "gh"},
	{Home: ".docker/config.json", Env: "DOCKER_CONFIG", Under: "config.json"}, {Home: ".cargo/credentials.toml"},
	{Home: ".config/git/credentials", Env: "XDG_CONFIG_HOME", Under: "git/credentials"},
	{Home: ".config/hub", Env: "XDG_CONFIG_HOME", Under: "hub"}, {Home: ".vault-token"}, {Home: ".pgpass"},
	{Home: ".azure", Env: "AZURE_CONFIG_DIR"}, {Home: ".terraform.d/credentials.tfrc.json"},
	{Home: ".password-store", Env: "PASSWORD_STORE_DIR"}, {Home: ".local/share/keyrings", Env: "XDG_DATA_HOME", Under: "keyrings"},
}

// AgentLogins are where the agent CLIs ralph drives keep their logins
// (each CLI's own file in workers/agents names its own, and that package
// sets this at start, as it alone may name the agents): hidden like the
// rest, so that a command cannot take the person's claude or codex login.
var AgentLogins []HiddenPath

// Links inside a hidden directory are followed, so that the file a
// dotfile manager's ~/.aws/credentials -> ~/dotfiles/aws/credentials
// names is hidden where it lies: Landlock judges the file a path leads
// to. The walk is bounded (linkDepth levels below each hidden directory,
// linkEntries entries in each): a link beyond the bound is not seen, nor
// can any hard link be, which is a second name of the same file and
// looks like any other file.
const (
	linkDepth   = 6
	linkEntries = 4096
)

// ownRecords are the directories in ralph's configuration and state
// directories that ralph alone fills, with files it writes and renames
// into place: the repositories' trust records (memory/git), the control
// sockets (coordinator/control) and the guards' records of a running
// command (guardrecord.go).
var ownRecords = []string{"git-trust", "run", "guard"}

// hiddenPaths lists the secret paths for the home directories homes and
// ralph's user configuration directories ralphConfigs (empty and relative
// entries are skipped),
// with getenv for the variables that move them (HiddenPath.Env), each as
// given and with its symbolic links resolved, so that a secret directory
// that is a link is hidden where it really lies too, and with the targets
// of the links inside the secret directories; links maps each such target
// to the secret path it was found in, which sandbox_readable opens with
// it.
func hiddenPaths(homes, ralphConfigs []string, getenv func(string) string) (secrets []string, links map[string]string) {
	var paths []string
	for _, sp := range slices.Concat(hiddenList, AgentLogins) {
		for _, home := range homes {
			if sp.Home != "" && filepath.IsAbs(home) {
				paths = append(paths, filepath.Join(home, sp.Home))
			}
		}
		if sp.Env == "" {
			continue
		}
		for _, dir := range filepath.SplitList(getenv(sp.Env)) {
			if filepath.IsAbs(dir) {
				paths = append(paths, filepath.Join(dir, sp.Under))
			}
		}
	}
	for _, home := range homes {
		if npmrc := filepath.Join(home, ".npmrc"); filepath.IsAbs(home) && npmrcSecret(npmrc) {
			paths = append(paths, npmrc)
		}
	}
	ralphFrom := len(paths)
	for _, c := range ralphConfigs {
		if filepath.IsAbs(c) {
			paths = append(paths, filepath.Clean(c))
		}
	}
	var out []string
	links = map[string]string{}
	for i, p := range paths {
		out = append(out, p)
		// Most secret paths are absent, and one lstat says so where
		// resolving the path would lstat every directory above it too:
		// a path whose last name is missing resolves to nothing.
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		r, err := realpath.Eval(p)
		if err != nil {
			continue
		}
		if r != p {
			out = append(out, r)
		}
		for _, t := range linkTargets(r, homes, i >= ralphFrom) {
			if _, ok := links[t]; !ok {
				links[t] = p
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), links
}

// linkTargets are the targets of the symbolic links inside the directory
// dir, within the bound, less those no secret can be: the home directory
// or a directory above it, a directory directly under / (/usr, /etc) and
// what lies under /proc, /sys and /dev, whose hiding would take ordinary
// programs away from every command. In ralph's own directory (ownRecords)
// the record directories ralph fills itself are not walked: they hold one
// file per project or per running ralph, thousands of them on a machine
// used for long, and only regular files ralph wrote by rename; a link a
// person put in place of one of them is still followed.
func linkTargets(dir string, homes []string, ralphDir bool) []string {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	var out []string
	seen := 0
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if seen++; seen > linkEntries {
				return
			}
			p := filepath.Join(d, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				if t, err := realpath.Eval(p); err == nil && !within(dir, t) && mayHide(t, homes) {
					out = append(out, t)
				}
			case e.IsDir() && depth < linkDepth:
				if ralphDir && depth == 1 && slices.Contains(ownRecords, e.Name()) {
					continue
				}
				walk(p, depth+1)
			}
		}
	}
	walk(dir, 1)
	return out
}

// mayHide reports whether a link's target may be hidden (see linkTargets).
func mayHide(target string, homes []string) bool {
	if strings.Count(target, "/") < 2 {
		return false
	}
	for _, home := range homes {
		if within(target, home) {
			return false
		}
	}
	for _, sys := range []string{"/proc", "/sys", "/dev"} {
		if within(sys, target) {
			return false
		}
	}
	return true
}

// npmrcSecret reports whether an .npmrc holds a credential (_authToken,
// _auth, _password): only then is it hidden, since npm reads the rest of
// it, the registry settings, for every install.
func npmrcSecret(path string) bool {
	// Read by the one small reader: a FIFO at ~/.npmrc is refused at
	// once rather than waited on.
	b, err := rootfs.ReadHead(rootfs.Person(), path, 1<<20)
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("_auth")) || bytes.Contains(b, []byte("_password"))
}

// defaultHidden is hiddenPaths for this process's homes and ralph's
// configuration directories (see homes and ralphConfigs), or the reading
// a HoldHidden keeps.
func defaultHidden() ([]string, map[string]string) {
	if s, l, ok := heldHidden(); ok {
		return s, l
	}
	return readHidden()
}

// readHidden reads the hidden paths from the homes as they are now.
func readHidden() ([]string, map[string]string) {
	hs := homes()
	return hiddenPaths(hs, ralphConfigs(hs), os.Getenv)
}

// SecretPaths are the hidden paths of this process's homes and ralph's
// configuration directories, before anything the person let commands
// read: each as given, with its links resolved, and the targets of the
// links inside it. Which directory may be the project (coordinator/project)
// refuses one that holds any of them, so it judges by the very list the
// sandbox hides.
func SecretPaths() []string {
	s, _ := defaultHidden()
	return s
}

// Homes are the person's home directories: $HOME and the login home the
// password database names, when it differs.
func Homes() []string { return homes() }

// homes are the home directories whose secrets are hidden: $HOME, and
// the login home the password database names when it differs, since
// OpenSSH and many other tools read their keys from the login home
// whatever $HOME says, so a command could otherwise read
// /home/u/.ssh/id_rsa while ralph runs with HOME elsewhere.
func homes() []string {
	var out []string
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		out = append(out, filepath.Clean(h))
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) && !slices.Contains(out, filepath.Clean(u.HomeDir)) {
		out = append(out, filepath.Clean(u.HomeDir))
	}
	return out
}

// ralphConfigs are ralph's user configuration directories:
// $XDG_CONFIG_HOME/ralph where ralph reads its configuration, and
// .config/ralph under every home too, which ralph read before the
// variable was set or reads when another program starts it without it.
//
// Ralph's state directories are hidden with them ($RALPH_HOME, else
// $XDG_STATE_HOME/ralph, and .local/state/ralph under every home): they
// hold the list of every project, the control sockets, and the guards'
// records of a running command, which keep the real text of a
// repository's configuration (its credentials) to put back.
func ralphConfigs(homes []string) []string {
	var out []string
	add := func(d string) {
		if d = filepath.Clean(d); filepath.IsAbs(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if d, err := os.UserConfigDir(); err == nil {
		add(filepath.Join(d, "ralph"))
	}
	for _, h := range homes {
		add(filepath.Join(h, ".config", "ralph"))
	}
	add(memory.RegistryDir(os.Getenv))
	for _, h := range homes {
		add(filepath.Join(h, ".local", "state", "ralph"))
	}
	return out
}

// AllowReadable lets commands read the secret paths that paths name
// (the person's sandbox_readable): a secret path is no longer hidden
// when an entry is that path, lies above it or lies inside it (naming
// ~/.ssh/known_hosts makes all of ~/.ssh readable: the sandbox hides
// whole entries, not parts of them), and the targets of the links found
// in a secret path it opens. Relative entries are ignored.
func (p *Policy) AllowReadable(paths ...string) {
	var allowed []string
	for _, a := range paths {
		if !filepath.IsAbs(a) {
			continue
		}
		allowed = append(allowed, filepath.Clean(a))
		if r, err := realpath.Eval(a); err == nil {
			allowed = append(allowed, r)
		}
	}
	opens := func(s string) bool {
		for _, a := range allowed {
			if within(a, s) || within(s, a) {
				return true
			}
		}
		return false
	}
	p.HiddenPaths = slices.DeleteFunc(p.HiddenPaths, func(s string) bool {
		origin, linked := p.hiddenLinks[s]
		return opens(s) || linked && opens(origin)
	})
}

// Keep hides paths that lie in the project root or another directory
// commands may write (coordinator/projectroot.Kept: the person's secrets and
// ralph's own configuration and state), which New leaves readable there:
// a root that holds them is granted only on the person's
// --allow-home-project, and under it they still stay hidden, and are not
// written. Relative paths are ignored; each is kept as given and with its
// links resolved. A policy that confines nothing keeps nothing.
func (p *Policy) Keep(paths ...string) { p.keep(paths, true) }

// KeepFromWriting keeps paths that lie in a temporary directory (TempDirs:
// a home directory under /tmp, as on CI machines) from being written, as
// Keep does, but leaves reading them as New and AllowReadable decided:
// what is hidden elsewhere stays hidden there (the secrets of that home
// are the person's secrets), and what the person's sandbox_readable opens
// stays readable.
func (p *Policy) KeepFromWriting(paths ...string) { p.keep(paths, false) }

// keep records paths as kept, and hidden too when hide.
func (p *Policy) keep(paths []string, hide bool) {
	if !p.Confines() {
		return
	}
	for _, k := range paths {
		if !filepath.IsAbs(k) {
			continue
		}
		k = filepath.Clean(k)
		forms := []string{k}
		if r, err := realpath.Eval(k); err == nil && r != k {
			forms = append(forms, r)
		}
		for _, f := range forms {
			if !slices.Contains(p.kept, f) {
				p.kept = append(p.kept, f)
			}
			if hide && !slices.Contains(p.HiddenPaths, f) {
				p.HiddenPaths = append(p.HiddenPaths, f)
			}
		}
	}
	slices.Sort(p.HiddenPaths)
}
