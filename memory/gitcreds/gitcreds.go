// Package gitcreds masks the credentials a repository's configuration
// holds, for what the model reads. actions/checkout persists the
// workflow's token in .git/config as
// `http.https://github.com/.extraheader = AUTHORIZATION: basic <base64>`,
// and many clones carry `https://user:token@host/…` remotes; ralph keeps
// GITHUB_TOKEN from the model's commands, so the same token must not come
// back through `read_file .git/config` or `git config --get`.
//
// Mask is the one function every place uses: ralph's file tools return
// its copy of a configuration file, the sandbox binds its copy over the
// file for commands, and the values it took out seed the redaction of
// ralph's records and of the results the model is sent. ralph's own git
// reads the real file.
package gitcreds

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/childenv"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// Masked is what a credential becomes in the copy the model reads; it
// is memory.Redacted, the word ralph's records use.
const Masked = "[REDACTED]"

// MaxConfig is the largest configuration file masked; git's own files
// are a few kilobytes, and a larger one is read whole by nobody.
const MaxConfig = 4 << 20

// IsConfigPath reports whether path (relative to a project, or absolute;
// either separator) names a file git reads as a repository's
// configuration: config or config.worktree inside a .git directory, its
// submodules' (.git/modules/…) or linked worktrees' (.git/worktrees/…)
// directories, or a bare repository's (a directory named *.git).
func IsConfigPath(path string) bool {
	path = filepath.ToSlash(filepath.Clean(path))
	base := pathBase(path)
	if base != "config" && base != "config.worktree" {
		return false
	}
	for _, part := range strings.Split(path, "/") {
		if strings.HasSuffix(part, ".git") {
			return true
		}
	}
	return false
}

func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Mask returns the configuration b with its credentials replaced by
// Masked, and the values it replaced (for a redactor: the header's
// credential, a Basic one decoded too, the URLs' passwords and tokens).
// What it masks:
//   - the value of every http.*.extraheader (an Authorization header, or
//     any other, which git sends to the server): the header's name stays;
//   - the value of every credential.* key (a helper may be a shell line
//     that prints a password; a username is the person's);
//   - in every line, section headers and comments included, a URL's
//     password (scheme://user:password@) and a user part that is a
//     token (scheme://ghp_…@).
//
// When nothing is masked, b itself is returned. The copy stays a valid
// configuration, so git run on it works except where it needs the
// credential.
func Mask(b []byte) ([]byte, []string) {
	if len(b) > MaxConfig || !mayHold(b) {
		return b, nil
	}
	var out bytes.Buffer
	var secrets []string
	section := ""
	cont := false // the previous line's value continues (a trailing backslash)
	maskCont := false
	lines := bytes.SplitAfter(b, []byte("\n"))
	for _, raw := range lines {
		line := string(raw)
		body, nl := strings.CutSuffix(line, "\n")
		body, cr := strings.CutSuffix(body, "\r")
		end := ""
		if nl {
			end = "\n"
		}
		if cr {
			end = "\r" + end
		}
		if cont {
			cont = strings.HasSuffix(body, "\\")
			if maskCont {
				if s := strings.TrimSpace(strings.TrimSuffix(body, "\\")); s != "" {
					secrets = append(secrets, s)
				}
				if !cont {
					maskCont = false
				}
				continue // the masked value ended on the line before
			}
			body = maskURLs(body, &secrets)
			out.WriteString(body + end)
			continue
		}
		rest := body
		trimmed := strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(trimmed, "[") {
			name, after := header(trimmed)
			section = name
			lead := rest[:len(rest)-len(after)]
			out.WriteString(maskURLs(lead, &secrets))
			rest = after
		}
		key, value, hasValue := keyValue(rest)
		switch {
		case hasValue && value != "" && section == "http" && key == "extraheader":
			masked, found := maskHeader(value)
			secrets = append(secrets, found...)
			rest = rest[:len(rest)-len(value)] + masked
			if strings.HasSuffix(value, "\\") {
				cont, maskCont = true, true
			}
		case hasValue && value != "" && section == "credential" && key != "":
			v := strings.Trim(strings.TrimSpace(value), `"`)
			if v != "" {
				if childenv.ValueLooksLikeCredential(v) || strings.Contains(strings.ToLower(v), "password") || key == "username" {
					secrets = append(secrets, v)
				}
				rest = rest[:len(rest)-len(value)] + Masked
				if strings.HasSuffix(value, "\\") {
					cont, maskCont = true, true
				}
			}
		default:
			rest = maskURLs(rest, &secrets)
			cont = hasValue && strings.HasSuffix(value, "\\")
		}
		out.WriteString(rest + end)
	}
	if len(secrets) == 0 && bytes.Equal(out.Bytes(), b) {
		return b, nil
	}
	return out.Bytes(), dedupe(secrets)
}

// mayHold is a quick look that spares the parse of a configuration with
// nothing to mask: no header, no credential section, no userinfo.
func mayHold(b []byte) bool {
	l := bytes.ToLower(b)
	return bytes.Contains(l, []byte("extraheader")) || bytes.Contains(l, []byte("[credential")) || bytes.Contains(l, []byte("credential.")) ||
		bytes.Contains(l, []byte("@"))
}

// header parses a section header at the start of s ("[http \"url\"]",
// "[credential]", "[http.url]") and returns the section's name in lower
// case and what follows the closing bracket, where git allows a key.
func header(s string) (name, after string) {
	i := 1
	for i < len(s) && s[i] != ']' && s[i] != '"' && s[i] != ' ' && s[i] != '\t' {
		i++
	}
	name = strings.ToLower(s[1:i])
	if dot := strings.IndexByte(name, '.'); dot >= 0 {
		name = name[:dot] // the old [section.subsection] form
	}
	inQuote := false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			inQuote = !inQuote
		case c == ']' && !inQuote:
			return name, s[i+1:]
		}
	}
	return name, ""
}

// keyValue splits a key line into the key (lower case) and the raw value
// after "=", comments included; hasValue is false for a line with no "="
// (a boolean key, a comment, a blank line).
func keyValue(s string) (key, value string, hasValue bool) {
	t := strings.TrimLeft(s, " \t")
	if t == "" || t[0] == '#' || t[0] == ';' {
		return "", "", false
	}
	k, v, ok := strings.Cut(t, "=")
	if !ok {
		return strings.ToLower(strings.TrimSpace(k)), "", false
	}
	return strings.ToLower(strings.TrimSpace(k)), strings.TrimLeft(v, " \t"), true
}

// maskHeader masks an extraheader's value: "Name: credential" keeps the
// name, anything else is masked whole. It returns the values taken out:
// the credential, its last word (a Basic or Bearer scheme's token), and
// for Basic the decoded user:password and password.
func maskHeader(value string) (string, []string) {
	v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "\\"))
	v = strings.Trim(v, `"`)
	name, cred, ok := strings.Cut(v, ":")
	if !ok || strings.ContainsAny(name, " \t") {
		return Masked, []string{v}
	}
	cred = strings.TrimSpace(cred)
	secrets := []string{cred}
	if f := strings.Fields(cred); len(f) > 1 {
		tok := f[len(f)-1]
		secrets = append(secrets, tok)
		if strings.EqualFold(f[0], "basic") {
			if dec, err := base64.StdEncoding.DecodeString(tok); err == nil {
				secrets = append(secrets, string(dec))
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					secrets = append(secrets, pass)
				}
			}
		}
	}
	return name + ": " + Masked, secrets
}

// maskURLs masks the userinfo's secret in every URL of s: the password
// of scheme://user:password@, or a user part that is a token.
func maskURLs(s string, secrets *[]string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, " \t\"'/?#@\\")
		if end < 0 || s[end] != '@' {
			continue
		}
		user, pass, hasPass := strings.Cut(s[:end], ":")
		switch {
		case hasPass && pass != "" && pass != Masked:
			*secrets = append(*secrets, pass)
			b.WriteString(user + ":" + Masked)
			s = s[end:]
		case !hasPass && isToken(user):
			*secrets = append(*secrets, user)
			b.WriteString(Masked)
			s = s[end:]
		}
	}
}

// isToken reports whether a URL's user part is a token rather than a
// name: a well-known token, or a long run of letters and digits holding
// both (a classic GitHub token is 40 hexadecimal digits), which no
// login name is.
func isToken(user string) bool {
	if user == "" || user == Masked {
		return false
	}
	if childenv.ValueLooksLikeCredential(user) {
		return true
	}
	if len(user) < 20 {
		return false
	}
	letters, digits := false, false
	for _, c := range user {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = true
		case c == '_' || c == '-':
		default:
			return false
		}
	}
	return letters && digits
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// MaskFile reads the configuration file at path through fsys (a
// project's door, which follows no link out of it) and masks it; masked
// is nil when the file holds nothing to mask, or is no regular file, or
// cannot be read.
func MaskFile(fsys afero.Fs, path string) (masked []byte, secrets []string) {
	if !isRegular(fsys, path) {
		return nil, nil
	}
	b, err := rootfs.ReadSmall(fsys, path, MaxConfig)
	if err != nil {
		return nil, nil
	}
	m, s := Mask(b)
	if len(s) == 0 && bytes.Equal(m, b) {
		return nil, nil
	}
	return m, s
}

// isRegular reports whether path is a regular file, not through a link.
func isRegular(fsys afero.Fs, path string) bool {
	var fi os.FileInfo
	var err error
	if l, ok := fsys.(afero.Lstater); ok {
		fi, _, err = l.LstatIfPossible(path)
	} else {
		fi, err = fsys.Stat(path)
	}
	return err == nil && fi.Mode().IsRegular()
}

// Files lists the configuration files, read through fsys, of the
// repository whose git directory is gitDir and common directory common
// (the same but for a linked worktree): config and config.worktree in
// both, and those of the submodules' repositories (modules/…) and the
// linked worktrees' directories (worktrees/*), and the files each of
// them includes (include.path, includeIf.*.path), followed to git's
// depth. Only regular files that exist and that fsys reaches are listed:
// through a project's door, an include outside the project is not.
func Files(fsys afero.Fs, gitDir, common string) []string {
	var out []string
	seen := map[string]bool{}
	var follow func(p string, depth int)
	follow = func(p string, depth int) {
		if seen[p] {
			return
		}
		seen[p] = true
		if !isRegular(fsys, p) {
			// An include naming a link is the file the link names,
			// when fsys reaches it.
			real, err := filepath.EvalSymlinks(p)
			if depth == 0 || err != nil || real == p || seen[real] || !isRegular(fsys, real) {
				return
			}
			seen[real], p = true, real
		}
		out = append(out, p)
		if depth < maxIncludeDepth {
			for _, inc := range includes(fsys, p) {
				follow(inc, depth+1)
			}
		}
	}
	add := func(p string) { follow(p, 0) }
	for i, d := range []string{gitDir, common} {
		if d == "" || i == 1 && d == gitDir {
			continue
		}
		add(filepath.Join(d, "config"))
		add(filepath.Join(d, "config.worktree"))
		for _, pattern := range []string{"modules/*/config", "modules/*/modules/*/config", "worktrees/*/config.worktree"} {
			matches, _ := afero.Glob(fsys, filepath.Join(d, pattern))
			for _, m := range matches {
				add(m)
			}
		}
	}
	return out
}

// Secrets returns the values Mask takes out of the configuration files
// of the repository at root, read through fsys (the project's door): its
// .git directory, or the repository a .git file names with its common
// directory where fsys reaches them. They are what ralph's redactor adds
// to the person's keys, so that ralph's records and the results the
// model is sent never carry them, even where the sandbox cannot bind a
// masked copy over the file.
func Secrets(fsys afero.Fs, root string) []string {
	gitDir, common := Locate(fsys, filepath.Join(root, ".git"))
	if gitDir == "" {
		return nil
	}
	var out []string
	for _, f := range Files(fsys, gitDir, common) {
		_, s := MaskFile(fsys, f)
		out = append(out, s...)
	}
	return dedupe(out)
}

// Locate resolves a .git entry, read through fsys, to its git directory
// and common directory: a directory is both; a file names the git
// directory ("gitdir: …"), whose commondir file names the common one.
// Both are "" when ptr is neither.
func Locate(fsys afero.Fs, ptr string) (gitDir, common string) {
	fi, err := fsys.Stat(ptr)
	switch {
	case err != nil:
		return "", ""
	case fi.IsDir():
		gitDir = ptr
	case fi.Mode().IsRegular():
		b, err := rootfs.ReadSmall(fsys, ptr, 4096)
		if err != nil {
			return "", ""
		}
		dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return "", ""
		}
		dir = strings.TrimSpace(dir)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(ptr), dir)
		}
		gitDir = filepath.Clean(dir)
	default:
		return "", ""
	}
	common = gitDir
	if b, err := rootfs.ReadSmall(fsys, filepath.Join(gitDir, "commondir"), 4096); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	return gitDir, common
}
