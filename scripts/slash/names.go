package slash

import "strings"

// A custom command's names, as Claude Code gives them: a file NAME.md at
// the top of a commands folder is /NAME; one in a subfolder (SUB/NAME.md,
// .claude/commands/trailofbits/config.md) is /SUB:NAME, the name its
// authors' READMEs write, and also /NAME, as Claude Code's own docs list
// it ("(project:SUB)"), but only when that plain name shadows nothing; a
// plugin's command is /PLUGIN:NAME (/PLUGIN:SUB:NAME in a subfolder, and
// /SUB:NAME and /PLUGIN:NAME for it too, as compound-engineering's README
// writes /workflows:plan), and /NAME on the same terms.
//
// A plain name shadows something when it is one of ralph's built-in
// commands, or one of Claude Code's: a command written for Claude Code
// never ran under such a name there (its built-in wins), so ralph does not
// hand it the name either; /config must not turn into a security firm's
// configuration prompt for a person who meant Claude Code's settings. A
// namespaced name (/SUB:NAME) is always the command's, and /PLUGIN:NAME
// always the plugin's: a project folder named like an added plugin does
// not take the plugin's names.

// peerBuiltins are Claude Code's built-in command names that ralph has
// no command of its own for: a namespaced custom command's plain name is
// never one of these.
var peerBuiltins = map[string]bool{
	"add-dir": true, "bashes": true, "bug": true, "config": true, "context": true, "doctor": true, "export": true,
	"feedback": true, "hooks": true, "ide": true, "install-github-app": true, "login": true, "logout": true,
	"memory": true, "output-style": true, "permissions": true, "pr-comments": true, "pr_comments": true,
	"privacy-settings": true, "release-notes": true, "review": true, "rewind": true, "sandbox": true,
	"security-review": true, "settings": true, "statusline": true, "terminal-setup": true, "todos": true,
	"upgrade": true, "usage": true, "vim": true,
}

// plainNameFree reports whether a namespaced command may also be called
// by its plain name: neither ralph nor Claude Code has a built-in of it.
func plainNameFree(name string) bool {
	name = strings.ToLower(name)
	if _, builtin := Lookup(name); builtin {
		return false
	}
	return !peerBuiltins[name]
}
