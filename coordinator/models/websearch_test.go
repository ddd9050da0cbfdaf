package models

import (
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/memory/providers"
)

// TestWebSearchNote: a session says one sentence when the person asked
// for web_search and it is not offered, and the client offers it only
// with the network.
func TestWebSearchNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  config.Config
		note string // a part of the sentence; "" for none
		on   bool   // the client's WebSearch
	}{
		{config.Config{Protocol: providers.ProtocolAnthropic, Model: "claude-sonnet-4-5", Network: true}, "", false},
		{config.Config{Protocol: providers.ProtocolAnthropic, Model: "claude-sonnet-4-5", Network: true, WebSearch: true}, "", true},
		{config.Config{Protocol: providers.ProtocolAnthropic, Model: "claude-sonnet-4-5", WebSearch: true}, "no network", false},
		{config.Config{Model: "gpt-4o-search-preview", Network: true, WebSearch: true}, "", true},
		{config.Config{Model: "gpt-4o", Network: true, WebSearch: true}, "not offered to gpt-4o", true},
		// OpenAI's own endpoint serves GPT-5 on the Responses API, whose
		// search it runs; held to chat completions, it has none.
		{config.Config{Model: "gpt-5", Network: true, WebSearch: true}, "", true},
		{config.Config{Model: "gpt-5", Wire: providers.WireChat, Network: true, WebSearch: true}, "not offered to gpt-5", true},
	} {
		note := WebSearchNote(tc.cfg)
		if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("%+v: note %q, want one with %q", tc.cfg, note, tc.note)
		}
		if got := ClientConfig(tc.cfg).WebSearch; got != tc.on {
			t.Errorf("%+v: client WebSearch %v, want %v", tc.cfg, got, tc.on)
		}
	}
}
