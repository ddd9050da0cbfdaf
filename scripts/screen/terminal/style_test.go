package terminal

import (
	"testing"
)

func TestColorFGBG(t *testing.T) {
	for _, tc := range []struct {
		v        string
		dark, ok bool
	}{
		{"15;0", true, true}, {"0;15", false, true}, {"0;7", false, true}, {"7;8", true, true},
		{"12;default;0", true, true}, {"0;default;15", false, true},
		{"", false, false}, {"15", false, false}, {"15;default", false, false}, {"0;42", false, false},
	} {
		if dark, ok := colorFGBG(tc.v); dark != tc.dark || ok != tc.ok {
			t.Errorf("colorFGBG(%q) = %v, %v; want %v, %v", tc.v, dark, ok, tc.dark, tc.ok)
		}
	}
}

func TestParseBackground(t *testing.T) {
	for _, tc := range []struct {
		answer   string
		dark, ok bool
	}{
		{"\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?62;c", true, true},
		{"\x1b]11;rgb:ffff/ffff/ffff\x07", false, true},
		{"\x1b]11;rgb:fd/f6/e3\x1b\\", false, true}, // solarized light
		{"\x1b]11;rgb:0/2/3\x1b\\", true, true},     // one digit a component
		{"\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\", true, true},
		{"\x1b[?62;c", false, false},                  // DA1 only: no OSC 11
		{"\x1b]11;rgb:ffff/ffff\x1b\\", false, false}, // two components
		{"\x1b]11;rgb:ffff/ffff/ffff", false, false},  // unterminated
		{"\x1b]11;rgb:fffff/0/0\x07", false, false},
		{"", false, false},
	} {
		if dark, ok := parseBackground([]byte(tc.answer)); dark != tc.dark || ok != tc.ok {
			t.Errorf("parseBackground(%q) = %v, %v; want %v, %v", tc.answer, dark, ok, tc.dark, tc.ok)
		}
	}
}

func TestRenderStyleSettings(t *testing.T) {
	f := Facts{OutTTY: true, Color: true}
	if got := f.RenderStyle("light"); got != StyleLight {
		t.Errorf("configured light = %q", got)
	}
	f.Style = StyleNoTTY
	if got := f.RenderStyle("light"); got != StyleNoTTY {
		t.Errorf("the flag should win over the config: %q", got)
	}
	if got := (Facts{Color: true}).RenderStyle(""); got != StyleDark {
		t.Errorf("not a terminal: %q, want dark without asking", got)
	}
}

// The keys typed while the terminal is asked its background come with
// its answers; they are told apart and kept in order.
func TestSplitAnswersKeepsTypeAhead(t *testing.T) {
	got := []byte("h\x1b]11;rgb:ffff/ffff/ffff\x1b\\i\x1b[A\x1b[?62;22c\x04")
	answers, typed := splitAnswers(got)
	if string(answers) != "\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22c" || string(typed) != "hi\x1b[A\x04" {
		t.Fatalf("answers %q, typed %q", answers, typed)
	}
	if dark, ok := parseBackground(answers); !ok || dark {
		t.Fatalf("the answers read as dark %v, ok %v", dark, ok)
	}
	keepTypeAhead(typed)
	if b := TypeAhead(); string(b) != "hi\x1b[A\x04" || TypeAhead() != nil {
		t.Fatalf("TypeAhead = %q, then not empty", b)
	}
	if _, typed := splitAnswers([]byte("\x1b]11;rgb:0/0/0\a")); typed != nil {
		t.Fatalf("a BEL-ended answer left %q", typed)
	}
}

// A line read whole from the terminal (an approval's answer in cooked
// mode) loses the terminal's late answers and keeps what was typed.
func TestWithoutAnswers(t *testing.T) {
	for in, want := range map[string]string{
		"y": "y",
		"\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?1;2cy": "y",
		"a\x1b[?62;22cb\x1b[A":                        "ab\x1b[A",
		"":                                            "",
	} {
		if got := WithoutAnswers(in); got != want {
			t.Errorf("WithoutAnswers(%q) = %q, want %q", in, got, want)
		}
	}
}
