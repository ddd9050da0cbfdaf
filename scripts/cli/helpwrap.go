package cli

import (
	"bytes"
	"io"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/scripts/screen/terminal"
)

// wrapHelp lays every help screen out at the terminal's width with the
// one wrapping rule, each flag's or command's description continuing
// under its own column, where cobra's lines would have been cut by the
// terminal in the middle of words. Help piped elsewhere (to less, grep or
// a file) is left as cobra writes it.
func wrapHelp(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		out := cmd.OutOrStdout()
		f, ok := outFile(out)
		width := 0
		if ok {
			width = terminal.Width(f)
		}
		if width <= 0 {
			help(cmd, args)
			return
		}
		var buf bytes.Buffer
		cmd.SetOut(&buf)
		help(cmd, args)
		cmd.SetOut(out)
		_, _ = io.WriteString(out, terminal.WrapHanging(buf.String(), width))
	})
}
