package cli

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
)

// habitWords are the commands other CLIs have and ralph has not, which
// people type out of habit (`claude update`, `codex login`). As the only
// word of a command line, each is answered here, never sent to the model
// as a task with the write tools offered: `ralph update` meant "update
// ralph", not "update something in this project". A longer task
// (`ralph "update the README"`) and `ralph -- update` still are tasks.
var habitWords = map[string]func() string{
	"update":  updateAnswer,
	"upgrade": updateAnswer,
	"login":   loginAnswer,
	"logout":  loginAnswer,
	"auth":    loginAnswer,
}

// habitAnswer is the answer to a command line that is only one of
// habitWords, and nil for any other. It is a usage error (exit 2): a
// script that ran `ralph update` expecting ralph to be updated must not
// go on as though it had been.
func habitAnswer(word string) error {
	answer, ok := habitWords[strings.ToLower(strings.TrimSpace(word))]
	if !ok {
		return nil
	}
	return usageErrorf("%s (to send %q to the model as a task: ralph -- %s)", answer(), word, word)
}

// updateAnswer says how ralph is updated: the way it was installed
// (README, "Install"), since ralph does not update itself.
func updateAnswer() string {
	return "ralph does not update itself; update it the way you installed it: from a release archive, unpack the newer one and install its ralph over this one " +
		"(tar -xzf ralph-VERSION-OS-ARCH.tar.gz && sudo install ralph-VERSION-OS-ARCH/ralph $(command -v ralph)); " +
		"from source, git pull in your checkout and run CGO_ENABLED=0 go install . (or make build); ralph version says which you have"
}

// loginAnswer says where ralph takes the model's key from: the
// environment, per provider (the one table, memory/providers), or the
// variable api_key_env names; there is no login to keep or forget.
func loginAnswer() string {
	var keys []string
	for _, p := range providers.All() {
		switch {
		case p.Local:
			keys = append(keys, p.Name+" needs none")
		case p.TokenEnv != "":
			keys = append(keys, fmt.Sprintf("%s or %s (%s)", p.KeyEnv, p.TokenEnv, p.Name))
		default:
			keys = append(keys, fmt.Sprintf("%s (%s)", p.KeyEnv, p.Name))
		}
	}
	return "ralph has no login: it reads the model's key from the environment, " + strings.Join(keys, ", ") +
		", or from the variable api_key_env names in " + config.UserFile("~/.config") +
		"; to log in, export the key in your shell, and to log out, unset it; ralph doctor says which key and provider it uses now"
}
