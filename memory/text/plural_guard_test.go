package text

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// countNoun is a format string that puts a plural noun after a number it
// does not know: "%d turns", "%d task(s)". Plural and Counted say "1 turn".
var countNoun = regexp.MustCompile(`%d ([a-z-]+\(s\)|[a-z]+s\b)`)

// templateNoun is the same in a page's template: "{{.Try}} attempt(s)",
// or a count's plural noun after its number: "{{.Turns}} turns" (the web
// view said "1 turns", issue 92).
var templateNoun = regexp.MustCompile(`\}\} ([a-z-]+\(s\)|(turns|tokens|attempts|files|tasks|lines|sessions|agents|commands|errors|decisions|reviews)\b)`)

// pluralAllowed are the format strings that may keep a plural noun after
// %d, each with why its number is never 1 (file, then the words after %d).
var pluralAllowed = map[string]string{
	"coordinator/runturn.go: times in a row":               "loopLimit, a constant above 1",
	"coordinator/llm/errtable.go: attempts":                "said only when attempts > 1",
	"coordinator/llm/served.go: tokens":                    "a prompt's size, never a single token",
	"coordinator/llm/served_fix.go: tokens":                "a context window's size",
	"coordinator/control/steer.go: agents":                 "the case n > 1; n == 1 has its own sentence",
	"coordinator/turn.go: characters":                      "a thinking model's reasoning, never one character",
	"workers/tools/list_files.go: entries":                 "the listing's limit",
	"workers/tools/ask_user.go: choices":                   "more than maxChoices",
	"workers/tools/edit_file.go: times in":                 "the case n > 1",
	"workers/approval/question.go: lines":                  "a command of several lines",
	"coordinator/instructions/instructions.go: characters": "said only above LargeInstructionChars",
	"memory/mentions/embed.go: files":                      "MaxFiles, a constant above 1",
	"coordinator/control/find.go: ralphs":                  "an ambiguity is two ralphs or more",
	"memory/lock.go: attempts":                             "lockAttempts, a constant above 1",
	"memory/state.go: sessions":                            "several sessions match",
	"scripts/cli/insights.go: sessions":                    "several sessions match",
	"scripts/mcpserve/http.go: characters":                 "MinTokenLength, a constant above 1",
	"scripts/doctor/doctor.go: tokens":                     "a context window's size",
	"scripts/cli/models.go: tokens":                        "a context window's size",
	"coordinator/turn.go: tokens":                          "an input budget, thousands of tokens",
	"coordinator/compact.go: tokens":                       "a conversation's size and a window's, thousands of tokens",
	"coordinator/compact.go: bytes":                        "a tool output cut for being long",
	"scripts/report/graph.go: tasks":                       "the many of text.Plural, one task has its own sentence",
	"coordinator/fitcontext.go: bytes":                     "a trimmed tool output, far more than a byte",
	"memory/skills/frontmatter.go: characters":             "maxName and maxDescription, constants above 1",
	"memory/git/review.go: bytes":                          "a file too big to show",
	"workers/tools/ask_user.go: bytes":                     "a question over the limit, and the limit",
	"workers/output.go: bytes":                             "output cut for being long",
	"workers/tools/read_file.go: bytes":                    "the line and output limits",
	// The stand-in model answers in the Messages API's own words, which
	// its clients match on; the real API says them so.
	"coordinator/llm/llmtest/messages_check.go: blocks": "the API's own sentence, about more than four breakpoints",
	"coordinator/llm/llmtest/messages_check.go: tokens": "the API's own sentence, about a prompt over the window",
}

// verbs end in s but count nothing: "line %d is", "Story %d has".
var verbs = map[string]bool{"is": true, "has": true, "was": true, "allows": true, "does": true, "says": true}

// TestCountNounsGoThroughPlural fails on a message that would say "1
// turns": a format string with a plural noun after %d, outside the
// allowed ones above.
func TestCountNounsGoThroughPlural(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "third_party" || rel == "e2e" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".html") || strings.HasSuffix(path, "_template.go") {
			// A page's template counts as a format string does.
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := templateNoun.FindString(string(src)); m != "" {
				t.Errorf("%s says %q after a number: write {{if eq .N 1}}noun{{else}}nouns{{end}}", rel, m)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if i := strings.Index(string(src), "map[bool]string{"); i >= 0 {
			// A second way to choose a noun by its count, which the
			// format-string check above cannot see.
			t.Errorf("%s:%d chooses a word with a map[bool]string; use text.Counted or text.Plural",
				rel, 1+strings.Count(string(src[:i]), "\n"))
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING {
				continue
			}
			for _, m := range countNoun.FindAllStringSubmatch(lit, -1) {
				if verbs[m[1]] {
					continue
				}
				if k := allowKey(rel, m[0]); k != "" {
					seen[k] = true
					continue
				}
				t.Errorf("%s: %q says %q after a number; use text.Counted or text.Plural (\"1 %s\" must not happen), or allow it in pluralAllowed with why it is never 1",
					fset.Position(pos), lit, m[0], strings.TrimSuffix(m[1], "(s)"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range pluralAllowed {
		if !seen[k] {
			t.Errorf("pluralAllowed names %q, which no longer occurs: remove it", k)
		}
	}
}

// allowKey is the pluralAllowed entry that allows the match ("%d turns")
// in file rel, "" when none.
func allowKey(rel, match string) string {
	for k := range pluralAllowed {
		file, words, _ := strings.Cut(k, ": ")
		if file == rel && strings.HasPrefix(words, strings.TrimPrefix(match, "%d ")) {
			return k
		}
	}
	return ""
}
