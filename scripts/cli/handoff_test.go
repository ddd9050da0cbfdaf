package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory"
)

// handoffArgs reads `ralph handoff`'s words: the first is the session
// when it names one, the only word or a word shaped like an id that
// names none is bad input, and any other words are the goal for the
// latest session.
func TestHandoffArgs(t *testing.T) {
	fs := afero.NewMemMapFs()
	r := Records{Fs: fs, Root: "/p"}
	if _, _, err := handoffArgs(r, nil); !errors.As(err, new(usageError)) {
		t.Fatalf("no sessions: err %v, want a usage error", err)
	}
	now := time.Now()
	older, newer := memory.NewID(now.Add(-time.Hour)), memory.NewID(now)
	for i, id := range []string{older, newer} {
		s, err := memory.CreateSession(fs, "/p", id, memory.State{Status: memory.StatusCompleted, UpdatedAt: now.Add(time.Duration(i) * time.Minute)})
		if err == nil {
			err = s.SaveState(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		args     []string
		id, goal string
		usage    bool
	}{
		{"nothing: the latest", nil, newer, "", false},
		{"a session alone", []string{older}, older, "", false},
		{"a session and a goal", []string{older[len(older)-9:], "fix", "it"}, older, "fix it", false},
		{"a goal of words", []string{"fix", "the", "bug"}, newer, "fix the bug", false},
		{"a goal in one argument", []string{"fix the bug"}, newer, "fix the bug", false},
		{"one word that names no session", []string{"nosuch"}, "", "", true},
		{"an id that names no session", []string{"20201231T2359", "go", "on"}, "", "", true},
	} {
		id, goal, err := handoffArgs(r, tc.args)
		if tc.usage {
			if !errors.As(err, new(usageError)) {
				t.Errorf("%s: err %v, want a usage error", tc.name, err)
			}
			continue
		}
		if err != nil || id != tc.id || goal != tc.goal {
			t.Errorf("%s: (%q, %q, %v), want (%q, %q)", tc.name, id, goal, err, tc.id, tc.goal)
		}
	}
}

func TestLooksLikeID(t *testing.T) {
	for w, want := range map[string]bool{
		"20261125T183000Z-0a1b2c3d4": true,
		"20261125":                   true,
		"a1-b2":                      true,
		"deadbeef":                   false, // no digit: a word
		"fix":                        false,
		"g1":                         false,
		"1.5":                        false,
		"":                           false,
	} {
		if got := looksLikeID(w); got != want {
			t.Errorf("looksLikeID(%q) = %v, want %v", w, got, want)
		}
	}
}
