//go:build pin

// This file only pins dependencies in go.mod while packages are being written.
package main

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/c-bata/go-prompt"
	_ "github.com/chzyer/readline"
	_ "github.com/creack/pty"
	_ "github.com/expr-lang/expr"
	_ "github.com/sashabaranov/go-openai"
	_ "github.com/spf13/afero"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/term"
)
