package lsp

import "github.com/ralph-dev/ralph/workers/sandbox"

func sandboxErrLives() error { return sandbox.ErrLivesAcrossCommands }
