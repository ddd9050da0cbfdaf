package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// TaskDiff is how an integration changed the task file, as lines
// [From, To) of the file the workflow holds replaced by Lines. An
// integration changes a task or two, so the diff is a few lines however
// long the file is: returning the whole file from every integration made
// a run's history grow with its tasks squared (about 18 KB a task at 200
// tasks), and Temporal ends a workflow whose history passes 50 MB.
type TaskDiff struct {
	From  int      `json:"from"`
	To    int      `json:"to"`
	Lines []string `json:"lines,omitempty"`
}

// taskHash names a task file's text; an integration whose input's Base is
// the hash of the file it finds on the branch answers with a diff from
// it, else with the whole file (someone else changed it, or a retried
// integration finds its own earlier push).
func taskHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// lines splits text keeping each line's end, so joining gives it back.
func lines(text string) []string { return strings.SplitAfter(text, "\n") }

// diffTasks is after as one hunk over before: the lines between their
// common start and common end.
func diffTasks(before, after string) TaskDiff {
	b, a := lines(before), lines(after)
	p := 0
	for p < len(b) && p < len(a) && b[p] == a[p] {
		p++
	}
	s := 0
	for s < len(b)-p && s < len(a)-p && b[len(b)-1-s] == a[len(a)-1-s] {
		s++
	}
	return TaskDiff{From: p, To: len(b) - s, Lines: a[p : len(a)-s]}
}

// apply is text with the diff's lines in place; a diff that does not fit
// text is an error, never a guess.
func (d TaskDiff) apply(text string) (string, error) {
	l := lines(text)
	if d.From < 0 || d.From > d.To || d.To > len(l) {
		return "", fmt.Errorf("the task file's diff [%d, %d) does not fit its %d lines", d.From, d.To, len(l))
	}
	var sb strings.Builder
	for _, s := range l[:d.From] {
		sb.WriteString(s)
	}
	for _, s := range d.Lines {
		sb.WriteString(s)
	}
	for _, s := range l[d.To:] {
		sb.WriteString(s)
	}
	return sb.String(), nil
}
