package cli

import (
	"slices"
	"testing"
)

// TestPromptWord is issue 67's eighth point: `ralph -c continue` and
// `ralph -c stop` continue the latest session with that word as the
// prompt, where cobra took the word for the command and refused -c
// ("unknown shorthand flag: 'c' in -c"); `ralph stop` is still the
// command, and a flag's value is never taken for the word.
func TestPromptWord(t *testing.T) {
	root := (&cli{}).command()
	for _, tt := range []struct{ args, want []string }{
		{[]string{"-c", "stop"}, []string{"-c", "--", "stop"}},
		{[]string{"-c", "continue"}, []string{"-c", "--", "continue"}},
		{[]string{"--continue", "stop", "--json", "now"}, []string{"--continue", "--json", "--", "stop", "now"}},
		{[]string{"-m", "gpt", "-yc", "stop", "-C", "dir", "it"}, []string{"-m", "gpt", "-yc", "-C", "dir", "--", "stop", "it"}},
		{[]string{"--session", "abc", "status"}, []string{"--session", "abc", "--", "status"}},
		{[]string{"-p", "resume"}, []string{"-p", "--", "resume"}},
		{[]string{"-c", "stop", "--", "-x"}, []string{"-c", "--", "stop", "-x"}},
		{[]string{"stop"}, []string{"stop"}},
		{[]string{"stop", "--force"}, []string{"stop", "--force"}},
		{[]string{"-C", "dir", "stop"}, []string{"-C", "dir", "stop"}},
		{[]string{"-m", "stop"}, []string{"-m", "stop"}},
		{[]string{"-c", "hello"}, []string{"-c", "hello"}},
		{[]string{"-c", "--", "stop"}, []string{"-c", "--", "stop"}},
		{[]string{"--bogus", "-c", "stop"}, []string{"--bogus", "-c", "stop"}},
		// exec is a command now (codex's one-shot): after -c the word is
		// the follow-up's, and bare it is the command.
		{[]string{"-c", "exec", "it"}, []string{"-c", "--", "exec", "it"}},
		{[]string{"exec", "say", "hi"}, []string{"exec", "say", "hi"}},
	} {
		if got := promptWord(root, tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.want)
		}
	}
}
