module github.com/ralph-dev/ralph

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/c-bata/go-prompt v0.2.6
	github.com/chzyer/readline v1.5.1
	github.com/creack/pty v1.1.24
	github.com/expr-lang/expr v1.17.8
	github.com/landlock-lsm/go-landlock v0.11.0
	github.com/mattn/go-runewidth v0.0.17
	github.com/sashabaranov/go-openai v1.43.0
	github.com/spf13/afero v1.15.0
	github.com/spf13/cobra v1.10.2
	github.com/yuin/goldmark v1.7.13
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.7 // indirect
	github.com/mattn/go-isatty v0.0.12 // indirect
	github.com/mattn/go-tty v0.0.3 // indirect
	github.com/pkg/term v1.2.0-beta.2 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/text v0.30.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.77 // indirect
)
