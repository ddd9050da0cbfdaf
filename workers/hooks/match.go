package hooks

import (
	"regexp"
	"strings"
	"sync"
)

// matchedEvents are the events whose hooks have a matcher, and what it is
// matched against: the tool's name for the tool events, SessionStart's
// source, SessionEnd's reason, PreCompact's and PostCompact's trigger,
// Notification's type, SubagentStart's agent type, StopFailure's error,
// InstructionsLoaded's load reason. The others (UserPromptSubmit, Stop,
// SubagentStop) ignore any matcher, as Claude Code does.
var matchedEvents = map[Event]bool{
	PreToolUse: true, PostToolUse: true, PostToolUseFailure: true, PermissionRequest: true, PermissionDenied: true,
	SessionStart: true, SessionEnd: true, PreCompact: true, PostCompact: true, Notification: true,
	SubagentStart: true, StopFailure: true, InstructionsLoaded: true,
}

// simpleMatcher is a matcher of names and "|" alone, which Claude Code
// compares exactly, name by name ("Edit|Write"), rather than as a regular
// expression that would also match "MultiEdit".
func simpleMatcher(m string) bool {
	for _, r := range m {
		if r != '|' && r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

var (
	regexMu    sync.Mutex
	regexCache = map[string]*regexp.Regexp{}
)

// compiled is m as a regular expression, compiled once.
func compiled(m string) (*regexp.Regexp, error) {
	regexMu.Lock()
	defer regexMu.Unlock()
	if re, ok := regexCache[m]; ok {
		return re, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, err
	}
	regexCache[m] = re
	return re, nil
}

// checkMatcher reports a matcher that is neither simple nor a regular
// expression.
func checkMatcher(m string) error {
	if m == "" || m == "*" || simpleMatcher(m) {
		return nil
	}
	_, err := compiled(m)
	return err
}

// Matches reports whether a hook of event with matcher runs for value, as
// Claude Code decides it: "" and "*" match everything; a matcher of names
// and "|" matches one of the names exactly; anything else is a regular
// expression searched in value ("Notebook.*", "mcp__memory__.*"). All of
// it is case-sensitive.
func Matches(event Event, matcher, value string) bool {
	if !matchedEvents[event] || matcher == "" || matcher == "*" {
		return true
	}
	if simpleMatcher(matcher) {
		for _, name := range strings.Split(matcher, "|") {
			if name == value {
				return true
			}
		}
		return false
	}
	re, err := compiled(matcher)
	return err == nil && re.MatchString(value)
}
