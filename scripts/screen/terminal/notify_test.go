package terminal

import "testing"

func TestNotifySequencePerTerminal(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	const bell = "\a"
	cases := []struct {
		name string
		env  func(string) string
		want string
	}{
		{"iTerm2", env("TERM_PROGRAM", "iTerm.app", "TERM", "xterm-256color"), bell + "\x1b]9;ralph: run ended\a"},
		{"WezTerm", env("TERM_PROGRAM", "WezTerm", "TERM", "xterm-256color"), bell + "\x1b]777;notify;ralph;run ended\a"},
		{"Ghostty by program", env("TERM_PROGRAM", "ghostty", "TERM", "xterm-ghostty"), bell + "\x1b]777;notify;ralph;run ended\a"},
		{"Ghostty over ssh", env("TERM", "xterm-ghostty"), bell + "\x1b]777;notify;ralph;run ended\a"},
		{"foot", env("TERM", "foot"), bell + "\x1b]777;notify;ralph;run ended\a"},
		{"urxvt", env("TERM", "rxvt-unicode-256color"), bell + "\x1b]777;notify;ralph;run ended\a"},
		{"kitty", env("TERM", "xterm-kitty", "KITTY_WINDOW_ID", "1"), bell + "\x1b]99;i=ralph:d=0;ralph\x1b\\\x1b]99;i=ralph:d=1:p=body;run ended\x1b\\"},
		{"kitty over ssh", env("KITTY_WINDOW_ID", "3", "TERM", "xterm-256color"), bell + "\x1b]99;i=ralph:d=0;ralph\x1b\\\x1b]99;i=ralph:d=1:p=body;run ended\x1b\\"},
		{"tmux inside iTerm2", env("TERM_PROGRAM", "iTerm.app", "TMUX", "/tmp/tmux-1/default,1,0", "TERM", "screen-256color"), bell},
		{"tmux's own program name", env("TERM_PROGRAM", "tmux", "TERM", "tmux-256color"), bell},
		{"screen", env("STY", "1.pts-0", "TERM", "xterm-kitty"), bell},
		{"xterm", env("TERM", "xterm-256color"), bell},
		{"Apple Terminal", env("TERM_PROGRAM", "Apple_Terminal", "TERM", "xterm-256color"), bell},
	}
	for _, c := range cases {
		if got := NotifySequence(c.env, "ralph", "run ended"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// The text cannot end the sequence early or drive the terminal.
	got := NotifySequence(env("TERM_PROGRAM", "WezTerm"), "a;b", "x\x07y\x1b]0;pwned\x07\nz")
	if got != bell+"\x1b]777;notify;a,b;xy z\a" {
		t.Errorf("hostile text: %q", got)
	}
}

func TestNotificationOnlyOnATerminal(t *testing.T) {
	f := Facts{ErrTTY: false, getenv: func(k string) string { return map[string]string{"TERM_PROGRAM": "iTerm.app"}[k] }}
	if got := f.Notification("ralph", "x"); got != "" {
		t.Errorf("not a terminal: %q", got)
	}
	f.ErrTTY = true
	if got := f.Notification("ralph", "x"); got != "\a\x1b]9;ralph: x\a" {
		t.Errorf("iTerm2: %q", got)
	}
	f.getenv = func(k string) string { return map[string]string{"TERM": "dumb"}[k] }
	if got := f.Notification("ralph", "x"); got != "" {
		t.Errorf("dumb terminal: %q", got)
	}
}
