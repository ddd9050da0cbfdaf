package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"
)

// bashWithoutPackage is put before cobra's bash completion script, which
// splits the command line with _get_comp_words_by_ref from the
// bash-completion package: without that package every Tab printed
// "_get_comp_words_by_ref: command not found". Where the package is not
// loaded, this stand-in splits the line up to the cursor at blanks (so
// "--flag=value" and "host:port" stay one word, as the package's -n =:
// keeps them); it does not undo the shell's quoting, which the package
// does. Loaded later, the package's own function replaces it.
const bashWithoutPackage = `# Without the bash-completion package, a minimal stand-in for the one
# function of it this script needs (ralph completion bash --help).
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref()
{
    local __ralph_line=${COMP_LINE:0:COMP_POINT} __ralph_i
    local -a __ralph_words
    read -r -a __ralph_words <<< "$__ralph_line"
    if [[ ${#__ralph_words[@]} -eq 0 || $__ralph_line == *[[:space:]] ]]; then
        __ralph_words+=("")
    fi
    __ralph_i=$(( ${#__ralph_words[@]} - 1 ))
    while [[ $# -gt 0 ]]; do
        case $1 in
        -n|-i|-w) shift ;;
        cur) cur=${__ralph_words[__ralph_i]} ;;
        prev) prev=${__ralph_words[__ralph_i-1]-} ;;
        words) words=("${__ralph_words[@]}") ;;
        cword) cword=$__ralph_i ;;
        esac
        shift
    done
}
fi

`

// bashCompletionLong is ralph completion bash --help.
const bashCompletionLong = `Generate the autocompletion script for the bash shell.

The script works with or without the bash-completion package: without it,
the script brings a minimal stand-in for the one function of the package it
needs (the command line is split at blanks up to the cursor; quoted words
are not unquoted as the package does). With the package loaded, its own
function is used.

To load completions in your current shell session:

	source <(ralph completion bash)

To load completions for every new session, execute once:

#### Linux:

	ralph completion bash > ~/.local/share/bash-completion/completions/ralph

(with the bash-completion package; without it, add the line
"source <(ralph completion bash)" to ~/.bashrc)

#### macOS:

	ralph completion bash > $(brew --prefix)/etc/bash_completion.d/ralph

You will need to start a new shell for this setup to take effect.
`

// useOwnBashCompletion makes cobra's completion command now and gives its
// bash subcommand the script that works without the bash-completion
// package, and the help that says so.
func useOwnBashCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, sh := range c.Commands() {
			if sh.Name() != "bash" {
				continue
			}
			sh.Long = bashCompletionLong
			sh.RunE = func(cmd *cobra.Command, _ []string) error {
				noDesc, _ := cmd.Flags().GetBool("no-descriptions")
				var b bytes.Buffer
				if err := cmd.Root().GenBashCompletionV2(&b, !noDesc); err != nil {
					return fmt.Errorf("completion bash: %w", err)
				}
				out := cmd.OutOrStdout()
				if _, err := fmt.Fprint(out, bashWithoutPackage); err != nil {
					return err
				}
				_, err := out.Write(b.Bytes())
				return err
			}
		}
	}
}
