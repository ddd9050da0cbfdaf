package cli

import (
	"strings"
	"testing"
)

func TestRawFormat(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"--json --verbos hi":                        FormatJSON,
		"--output-format json hi":                   FormatJSON,
		"--output-format=stream-json hi":            FormatStreamJSON,
		"--output-format stream-json --json hi":     FormatJSON,
		"--json --output-format text hi":            FormatJSON,
		"--json=false --output-format=json hi":      FormatJSON,
		"--json=false hi":                           FormatText,
		"--output-format xml hi":                    FormatText,
		"hi -- --json":                              FormatText,
		"--output-format":                           FormatText,
		"--output-format json --output-format text": FormatText,
	} {
		if got := rawFormat(strings.Fields(args)); got != want {
			t.Errorf("rawFormat(%s) = %q, want %q", args, got, want)
		}
	}
}

func TestValueErrorSpeaksRalphsWords(t *testing.T) {
	t.Parallel()
	c := &cli{}
	root := c.command()
	for args, want := range map[string]string{
		"--max-turns abc hi":               `--max-turns wants a whole number, not "abc"`,
		"--max-turns 99999999999999999999": `--max-turns wants a smaller number than "99999999999999999999"`,
		"--idle-timeout soon hi":           `--idle-timeout wants a duration such as 90s, 5m or 1h30m, not "soon"`,
		"--json=maybe hi":                  `--json is on by itself (--json) or off (--json=false), not "maybe"`,
		"--max-turns":                      "--max-turns needs a value (--max-turns VALUE)",
	} {
		err := root.ParseFlags(strings.Fields(args))
		if err == nil {
			t.Errorf("%s: parsed", args)
			continue
		}
		if got := flagError(root, err).Error(); got != want {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
}
