module github.com/ralph-dev/ralph

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/JohannesKaufmann/html-to-markdown/v2 v2.4.0
	github.com/c-bata/go-prompt v0.2.6
	github.com/charmbracelet/glamour v1.0.0
	github.com/charmbracelet/x/ansi v0.10.2
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/chzyer/readline v1.5.1
	github.com/creack/pty v1.1.24
	github.com/expr-lang/expr v1.17.8
	github.com/fsnotify/fsnotify v1.9.0
	github.com/google/jsonschema-go v0.4.3
	github.com/landlock-lsm/go-landlock v0.11.0
	github.com/mattn/go-runewidth v0.0.17
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/muesli/termenv v0.16.0
	github.com/sashabaranov/go-openai v1.43.0
	github.com/segmentio/encoding v0.5.4
	github.com/sourcegraph/jsonrpc2 v0.2.3
	github.com/spf13/afero v1.15.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/yuin/goldmark v1.7.13
	github.com/yuin/goldmark-highlighting/v2 v2.0.0-20230729083705-37449abec8cc
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/image v0.41.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.77
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/JohannesKaufmann/dom v0.2.0 // indirect
	github.com/alecthomas/chroma/v2 v2.20.0 // indirect
	github.com/aymanbagabas/go-osc52/v2 v2.0.1 // indirect
	github.com/charmbracelet/colorprofile v0.2.3-0.20250311203215-f60798e515dc // indirect
	github.com/charmbracelet/lipgloss v1.1.1-0.20250404203927-76690c660834 // indirect
	github.com/charmbracelet/x/cellbuf v0.0.13 // indirect
	github.com/charmbracelet/x/exp/slice v0.0.0-20250327172914-2fdc97757edf // indirect
	github.com/charmbracelet/x/term v0.2.1 // indirect
	github.com/coder/acp-go-sdk v0.13.0 // indirect
	github.com/dlclark/regexp2 v1.11.5 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/lucasb-eyer/go-colorful v1.3.0 // indirect
	github.com/mattn/go-colorable v0.1.7 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-tty v0.0.3 // indirect
	github.com/muesli/reflow v0.3.0 // indirect
	github.com/pkg/term v1.2.0-beta.2 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/xo/terminfo v0.0.0-20220910002029-abceb7e1c41e // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/yuin/goldmark-emoji v1.0.6 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/text v0.37.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

// Patched copies that do their work on first use rather than in package
// init (each directory's PATCH.md says what changed; docs/development.md,
// "Start-up budget").
replace (
	github.com/BurntSushi/toml => ./third_party/toml
	github.com/alecthomas/chroma/v2 => ./third_party/chroma
	github.com/charmbracelet/glamour => ./third_party/glamour
	github.com/google/jsonschema-go => ./third_party/jsonschema-go
	github.com/modelcontextprotocol/go-sdk => ./third_party/mcp-go-sdk
	github.com/yuin/goldmark => ./third_party/goldmark
	go.yaml.in/yaml/v3 => ./third_party/yaml
	golang.org/x/net => ./third_party/xnet
)

replace github.com/chzyer/readline => ./third_party/readline
