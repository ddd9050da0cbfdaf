package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// Check reports, in one sentence, an agent that cannot start: its CLI not
// on PATH, a CLI beside project settings it cannot be told to leave out
// (ErrProjectSettings), or an exec: command whose program is missing or
// not executable. It runs before any task is touched, so a typo is a usage
// error instead of a failed task. root is the project root, where the
// agent runs and relative paths start; "" skips the relative paths, for a
// caller that does not know the root yet. Commands whose program only the
// shell can tell (a builtin such as cd, an expansion such as $AGENT) are
// let through: bash will say what is wrong with them.
func (a Agent) Check(root string) error {
	if a.Kind != AgentExec && cliFor(a.Kind) != nil {
		bin := strings.TrimSpace(a.program())
		if strings.Contains(bin, "/") {
			return checkProgram(string(a.Kind), bin, root)
		}
		if _, err := childenv.Program(bin); errors.Is(err, childenv.ErrInProject) {
			return fmt.Errorf("--agent %s needs the %s command, which %s; install it outside the project or choose another agent", a.Kind, bin, inProject(err))
		} else if err != nil {
			return fmt.Errorf("--agent %s needs the %s command, which is not on PATH; install it or choose another agent", a.Kind, bin)
		}
		// Asked again before every start (Run): the model may write the
		// file while the loop runs.
		return checkProjectSettings(a.Kind, root)
	}
	if a.Kind == AgentExec {
		word, ok := firstProgram(a.Command)
		if !ok {
			return nil
		}
		if strings.Contains(word, "/") {
			return checkProgram("exec:", word, root)
		}
		if _, err := childenv.Program(word); errors.Is(err, childenv.ErrInProject) {
			return fmt.Errorf("--agent exec: runs %q, which %s", word, inProject(err))
		} else if err != nil {
			return fmt.Errorf("--agent exec: runs %q, which is not a command on PATH", word)
		}
		return nil
	}
	return fmt.Errorf("unknown agent kind %q", a.Kind)
}

// inProject says where a program found only inside the project lies.
func inProject(err error) string {
	var ip *childenv.InProjectError
	if errors.As(err, &ip) {
		return "is on PATH only inside the project (" + ip.Path + "), where the model may write it"
	}
	return "is on PATH only inside the project, where the model may write it"
}

// checkProgram checks a program named by a path, relative to root.
func checkProgram(agent, path, root string) error {
	if strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		path = filepath.Join(home, path[2:])
	}
	if !filepath.IsAbs(path) {
		if root == "" {
			return nil
		}
		path = filepath.Join(root, path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--agent %s runs %s, which does not exist", agent, path)
	case err != nil:
		return fmt.Errorf("--agent %s runs %s, which cannot be used: %w", agent, path, err)
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("--agent %s runs %s, which is not executable (chmod +x it, or run it through its interpreter)", agent, path)
	}
	return nil
}

// shellWords are bash keywords and builtins: a command starting with one
// is the shell's business, except for the wrappers in shellWrappers, whose
// next word is the program.
var shellWords = map[string]bool{
	"if": true, "then": true, "for": true, "while": true, "until": true, "case": true, "select": true,
	"function": true, "{": true, "[[": true, "!": true, "cd": true, "source": true, ".": true, "eval": true,
	"set": true, "export": true, "trap": true, "echo": true, "printf": true, "true": true, "false": true,
	":": true, "test": true, "[": true, "read": true, "builtin": true, "let": true, "declare": true,
	"local": true, "ulimit": true, "umask": true, "wait": true, "shopt": true, "alias": true, "type": true,
}

var shellWrappers = map[string]bool{"exec": true, "command": true, "nohup": true, "time": true, "env": true}

// firstProgram returns the program a bash command line starts, when it
// can be told without running the shell: leading NAME=value assignments
// and wrappers such as exec or env are skipped, and simple quotes and
// backslashes are removed. ok is false when only the shell can tell.
func firstProgram(command string) (string, bool) {
	// The words returned are whole even when an expansion stopped the
	// split: a word is only kept once it has ended.
	words, _ := leadingWords(command)
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case isAssignment(w):
			continue
		case shellWrappers[w]:
			// Options of the wrappers (env -i, command -p) are skipped too.
			for i+1 < len(words) && strings.HasPrefix(words[i+1], "-") {
				i++
			}
			continue
		case shellWords[w]:
			return "", false
		}
		return w, true
	}
	return "", false
}

func isAssignment(w string) bool {
	name, _, found := strings.Cut(w, "=")
	if !found || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// leadingWords splits the start of a command line into words, up to the
// first operator (; & | < > ( ) or a newline). A word holding an expansion
// ($, `, a glob) ends the list with ok false, since only bash knows what
// it becomes.
func leadingWords(command string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case strings.IndexByte(";&|<>()\n", c) >= 0:
			end()
			return words, true
		case c == '\\' && i+1 < len(command):
			i++
			cur.WriteByte(command[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(command[i+1:], '\'')
			if j < 0 {
				return words, false
			}
			cur.WriteString(command[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(command[i+1:], '"')
			if j < 0 || strings.ContainsAny(command[i+1:i+1+j], "$`\\") {
				return words, false
			}
			cur.WriteString(command[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case strings.IndexByte("$`*?[", c) >= 0:
			return words, false
		case c == '~' && !inWord && !(i+1 == len(command) || command[i+1] == '/'):
			return words, false // ~user: bash knows whose home that is
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	return words, true
}
