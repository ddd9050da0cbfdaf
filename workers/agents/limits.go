package agents

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/memory/text"
)

// An agent CLI that hits its account's usage limit says so in its own
// words and stops; ralph reads them so the task loop can wait for the
// reset instead of failing the task. What each one prints:
//
//   - claude (Claude Code 2.x, stream-json): a {"type":"rate_limit_event",
//     "rate_limit_info":{"status":"rejected","resetsAt":<unix seconds>,
//     "rateLimitType":"five_hour",…}} line (status "allowed" and
//     "allowed_warning" are informational), then a synthetic assistant
//     message and an is_error result saying "You've hit your limit ·
//     resets 2pm (Europe/Berlin)", "resets 2:10pm (Europe/Moscow)" or
//     "resets Apr 23 at 4pm (America/Recife)" (anthropics/claude-code
//     issues #42042, #59637, #51981; the event: paperclipai/paperclip#5776
//     and others that parse it); older versions (1.0.x) said "Claude AI
//     usage limit reached|1760000400", the reset in unix seconds after the
//     bar (anthropics/claude-code#9046), and some "Claude usage limit
//     reached. Your limit will reset at 2pm (America/New_York).";
//   - codex (codex exec --json): an {"type":"error","message":…} event and
//     {"type":"turn.failed","error":{"message":…}} with "You've hit your
//     usage limit. … Try again at 3:45 PM." — the local time, or "Sep 5th,
//     2025 3:45 PM" on another day — or "Try again later." when the
//     server gave no time (UsageLimitReachedError in
//     codex-rs/core/src/error.rs of github.com/openai/codex).
//   - gemini (Gemini CLI 0.61, stream-json): a result with status "error"
//     and "[API Error: You have exhausted your daily quota on this
//     model.]", when the API refuses a request with 429 and a per-day
//     quota violation (classifyGoogleError in packages/core/src/utils/
//     googleQuotaErrors.ts of github.com/google-gemini/gemini-cli; it
//     retries the per-minute ones itself). The Gemini API's daily quotas
//     reset at midnight Pacific time, which is when ralph waits for.
//
// An exec: agent is often a wrapper around one of these, so its output is
// read for the same words.

// UsageLimit is an agent stopping on its account's usage limit.
type UsageLimit struct {
	// Until is when the agent said the limit resets; zero when it did
	// not say.
	Until time.Time
	// Text is the agent's own words, one line.
	Text string
}

// UsageLimitError is the error of a task attempt that an external agent
// gave up on its usage limit.
type UsageLimitError struct {
	Agent Kind
	UsageLimit
}

func (e *UsageLimitError) Error() string {
	if e.Until.IsZero() {
		return fmt.Sprintf("the %s agent hit its usage limit: %s", e.Agent, e.Text)
	}
	return fmt.Sprintf("the %s agent hit its usage limit until %s: %s", e.Agent, text.Clock(e.Until, time.Now()), e.Text)
}

var (
	// limitWordsRe finds an agent saying it hit its limit.
	// Words only one CLI uses, and their reset times, are its usageLimit's
	// business.
	limitWordsRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)you[’']ve hit your (?:usage )?limit|usage limit reached|(?:5-hour|five-hour|session|daily|weekly|opus|sonnet|opus weekly|sonnet weekly) limit reached`)
	})
	// resetAtRe finds when: "resets 2pm (Europe/Berlin)", "reset at
	// 2:10pm", "resets Apr 23 at 4pm (America/Recife)", "Try again at 3:45
	// PM", "try again at Sep 5th, 2025 3:45 PM".
	resetAtRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:resets?|try again) (?:at )?` +
			`(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? (?:(\d{4}),? )?(?:at )?)?` +
			`(\d{1,2})(?::(\d{2}))? ?([ap])\.?m\.?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*)\))?`)
	})
)

var months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// ParseUsageLimit reads an agent's message about its usage limit, in
// the words of any CLI (an exec: agent often wraps one), received at now.
// ok is false when s says nothing of the kind; Until is zero when it
// names no reset time.
func ParseUsageLimit(s string, now time.Time) (UsageLimit, bool) {
	for _, c := range clis {
		if l, ok := c.usageLimit(s, now); ok {
			return l, true
		}
	}
	w := limitWordsRe().FindString(s)
	if w == "" {
		return UsageLimit{}, false
	}
	l := UsageLimit{Text: limitLine(s, w)}
	if m := resetAtRe().FindStringSubmatch(s); m != nil {
		l.Until = resetTime(m, now)
	}
	return l, true
}

// resetTime is the moment resetAtRe's match names: the next such time
// (a reset a few minutes past counts as now, the message being older than
// its reading), in the time zone it names or else the local one.
func resetTime(m []string, now time.Time) time.Time {
	loc := time.Local
	if m[7] != "" {
		if l, err := time.LoadLocation(m[7]); err == nil {
			loc = l
		}
	}
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}
	}
	hour %= 12
	if strings.EqualFold(m[6], "p") {
		hour += 12
	}
	local := now.In(loc)
	const slack = 10 * time.Minute
	if m[1] != "" {
		day, _ := strconv.Atoi(m[2])
		year := local.Year()
		if m[3] != "" {
			year, _ = strconv.Atoi(m[3])
		}
		t := time.Date(year, months[strings.ToLower(m[1])], day, hour, minute, 0, 0, loc)
		if m[3] == "" && t.Before(now.Add(-24*time.Hour)) {
			t = t.AddDate(1, 0, 0) // "Jan 2" read on Dec 30
		}
		return t
	}
	t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
	if t.Before(now.Add(-slack)) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// limitLine is the line of s that holds the words found, trimmed and
// clipped, for a person to read.
func limitLine(s, found string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, found) {
			return text.Clip(strings.TrimSpace(text.StripControls(line)), 300)
		}
	}
	return text.Clip(strings.TrimSpace(text.StripControls(s)), 300)
}

// maxLimitLine is the longest plain line read for a usage-limit message.
const maxLimitLine = 2048

// mentionsLimit reports whether b holds "limit" in any case, the word
// every usage-limit message has; it is cheap where the patterns are not.
func mentionsLimit(b []byte) bool {
	for i := 0; i+5 <= len(b); i++ {
		if b[i]|0x20 == 'l' && b[i+1]|0x20 == 'i' && b[i+2]|0x20 == 'm' && b[i+3]|0x20 == 'i' && b[i+4]|0x20 == 't' {
			return true
		}
	}
	return false
}

// noteLimit keeps the first usage limit the agent's words name; a later
// message with a reset time completes one without.
func (s *agentStream) noteLimit(words string) {
	l, ok := ParseUsageLimit(words, time.Now())
	if !ok {
		return
	}
	s.keepLimit(l)
}

func (s *agentStream) keepLimit(l UsageLimit) {
	switch {
	case s.limit == nil:
		s.limit = &l
	case s.limit.Until.IsZero() && !l.Until.IsZero():
		s.limit.Until = l.Until
	}
}
