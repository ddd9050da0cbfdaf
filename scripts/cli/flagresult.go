package cli

import (
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// resultCommands are the commands whose json and stream-json output ends
// in a result object (docs/oneshot.md); the root's one-shot is one too.
var resultCommands = []string{"exec", "run", "plan", "review"}

// failBeforeRun prints the error result object on stdout for an error
// that stopped a command before it could print one itself: a bad flag or
// value, which cobra refuses before --json is parsed, so the format is
// read from the raw arguments. A script then gets the object
// docs/oneshot.md promises for every error. The sentence on stderr is
// exitCode's, as in text mode.
func failBeforeRun(root *cobra.Command, args []string, err error) {
	var done exitError
	if err == nil || errors.As(err, &done) {
		// Done: the command ran, and said what happened in its own
		// format.
		return
	}
	format := rawFormat(args)
	if format == FormatText {
		return
	}
	cmd, _, ferr := root.Find(args)
	if ferr != nil || cmd == nil {
		cmd = root
	}
	if cmd != root && !slices.Contains(resultCommands, cmd.Name()) {
		return
	}
	cwd, _ := os.Getwd()
	face := &OneShot{Format: format, Stdout: os.Stdout, Stderr: io.Discard, Cwd: cwd}
	if format == FormatStreamJSON {
		// A reader of the other shape's lines (Claude Code's Agent SDK)
		// gets the error as its result line, not ralph's init and result.
		face.Shape = rawValue(args, "--stream-shape")
	}
	face.Fail(ExitUsage, err)
}

// rawFormat is the output format the raw arguments ask for, read as
// pflag would read them (the last --output-format wins, and --json over
// it), up to "--". A value that is no format is text: the command's own
// check says what is wrong with it.
func rawFormat(args []string) string {
	format, asJSON := FormatText, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case a == "--json":
			asJSON = true
		case strings.HasPrefix(a, "--json="):
			asJSON, _ = strconv.ParseBool(strings.TrimPrefix(a, "--json="))
		case a == "--output-format" && i+1 < len(args):
			i++
			format = args[i]
		case strings.HasPrefix(a, "--output-format="):
			format = strings.TrimPrefix(a, "--output-format=")
		}
	}
	if asJSON {
		return FormatJSON
	}
	if ValidateFormat(format) != nil {
		return FormatText
	}
	return format
}

// rawValue is the last value the raw arguments give flag (as "--flag V"
// or "--flag=V"), up to "--"; "" for none.
func rawValue(args []string, flag string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return v
		case a == flag && i+1 < len(args):
			i++
			v = args[i]
		case strings.HasPrefix(a, flag+"="):
			v = strings.TrimPrefix(a, flag+"=")
		}
	}
	return v
}

// valueError says in ralph's words what is wrong with a flag's value
// (pflag's InvalidValueError carries Go's strconv.ParseInt: parsing "abc"),
// or that a flag lacks one; ok is false for any other error.
func valueError(err error) (_ error, ok bool) {
	var req *pflag.ValueRequiredError
	if errors.As(err, &req) && req.GetFlag() != nil {
		name := "--" + req.GetFlag().Name
		return usageErrorf("%s needs a value (%s VALUE)", name, name), true
	}
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) || bad.GetFlag() == nil {
		return nil, false
	}
	name, v := "--"+bad.GetFlag().Name, bad.GetValue()
	switch t := bad.GetFlag().Value.Type(); {
	case errors.Is(bad, strconv.ErrRange):
		return usageErrorf("%s wants a smaller number than %q", name, v), true
	case strings.HasPrefix(t, "uint"):
		return usageErrorf("%s wants a whole number, 0 or more, not %q", name, v), true
	case strings.HasPrefix(t, "int") || t == "count":
		return usageErrorf("%s wants a whole number, not %q", name, v), true
	case strings.HasPrefix(t, "float"):
		return usageErrorf("%s wants a number, not %q", name, v), true
	case t == "duration":
		return usageErrorf("%s wants a duration such as 90s, 5m or 1h30m, not %q", name, v), true
	case t == "bool":
		return usageErrorf("%s is on by itself (%s) or off (%s=false), not %q", name, name, name, v), true
	}
	return usageErrorf("%s does not take %q: %v", name, v, bad.Unwrap()), true
}
