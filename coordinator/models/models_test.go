package models

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// The list is asked for once a Resolver, a failure included, so that Tab
// never waits twice for an endpoint that cannot answer.
func TestListAskedOnce(t *testing.T) {
	calls := 0
	r := New("http://x/v1", "", func(context.Context) ([]string, error) { calls++; return nil, errors.New("down") })
	for range 3 {
		if _, err := r.List(context.Background()); err == nil {
			t.Fatal("no error")
		}
	}
	if calls != 1 {
		t.Fatalf("asked %d times", calls)
	}
}

func TestNearest(t *testing.T) {
	ids := []string{"gpt-4o", "gpt-4o-mini", "llama3.1:8b", "qwen2.5-coder"}
	if got := Nearest("gpt4o", ids, 3); !slices.Equal(got, []string{"gpt-4o"}) {
		t.Errorf("gpt4o: %q", got)
	}
	if got := Nearest("llama3", ids, 3); len(got) == 0 || got[0] != "llama3.1:8b" {
		t.Errorf("llama3: %q", got)
	}
	if got := Nearest("zzzzzzzz", ids, 3); len(got) != 0 {
		t.Errorf("zzzzzzzz: %q", got)
	}
}

// The cache file carries a list from one Resolver to the next.
func TestCacheFile(t *testing.T) {
	path := t.TempDir() + "/models.json"
	_, _ = New("http://x/v1", path, func(context.Context) ([]string, error) { return []string{"a", "b"}, nil }).List(context.Background())
	got, err := New("http://x/v1", path, func(context.Context) ([]string, error) { return nil, errors.New("not asked") }).List(context.Background())
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("%q, %v", got, err)
	}
}

// A listed name that would drive the terminal is left out.
func TestListDropsControls(t *testing.T) {
	got, _ := New("http://x/v1", "", func(context.Context) ([]string, error) { return []string{"ok", "bad\x1b]0;x\a", ""}, nil }).List(context.Background())
	if !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("%q", got)
	}
}
