package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/memory"
)

// notableLimit bounds the decisions ralph analyze lists; the rest are
// counted.
const notableLimit = 30

// DecisionStats sums up a session's decisions.jsonl: how many of each
// kind, how many a person or an agent made, and the decisions that
// explain the run, with their reasons.
type DecisionStats struct {
	Total    int            `json:"total"`
	ByKind   map[string]int `json:"by_kind"`
	ByPerson int            `json:"by_person"`
	ByAgent  int            `json:"by_agent"`
	// Notable are the decisions that changed the run's course — all but
	// the routine pick of the next task — in order, at most notableLimit;
	// MoreNotable counts those left out.
	Notable     []memory.DecisionRecord `json:"notable"`
	MoreNotable int                     `json:"more_notable,omitempty"`
}

// routine reports a decision that every attempt makes: the task picked.
// It has its reason too, but a list of them hides the ones that matter.
func routine(d memory.DecisionRecord) bool { return d.Kind == "task_picked" }

func decisionStats(decs []memory.DecisionRecord) DecisionStats {
	s := DecisionStats{ByKind: map[string]int{}, Notable: []memory.DecisionRecord{}}
	for _, d := range decs {
		s.Total++
		s.ByKind[d.Kind]++
		switch d.By {
		case memory.DecidedByPerson:
			s.ByPerson++
		case memory.DecidedByAgent:
			s.ByAgent++
		}
		if routine(d) {
			continue
		}
		if len(s.Notable) < notableLimit {
			s.Notable = append(s.Notable, d)
		} else {
			s.MoreNotable++
		}
	}
	return s
}

// decisionHead is a decision's first line: its kind, whose it was and
// what was decided ("**task_retry** `t6`: t6 attempt 1 failed; …").
// kind formats the kind (bold in markdown).
func decisionHead(d memory.DecisionRecord, kind func(string) string, code func(string) string) string {
	s := kind(d.Kind)
	var who []string
	if d.Task != "" {
		who = append(who, code(d.Task))
	}
	switch {
	case d.By == memory.DecidedByPerson:
		who = append(who, "by the person")
	case d.By == memory.DecidedByAgent && d.Agent != "":
		who = append(who, "by agent "+d.Agent)
	case d.By == memory.DecidedByAgent:
		who = append(who, "by the agent")
	}
	if len(who) > 0 {
		s += " (" + strings.Join(who, ", ") + ")"
	}
	return s + ": " + oneLine(d.Detail, 300)
}

// decisionWhy is what a decision says beyond what was decided: why, how
// sure, and what else was weighed; "" for a record without any.
func decisionWhy(d memory.DecisionRecord) []string {
	var out []string
	if d.Reason != "" {
		out = append(out, "why: "+oneLine(d.Reason, 500))
	}
	var more []string
	if d.Confidence != nil {
		more = append(more, "confidence "+strconv.FormatFloat(*d.Confidence, 'f', -1, 64))
	}
	if len(d.Alternatives) > 0 {
		alts := make([]string, len(d.Alternatives))
		for i, a := range d.Alternatives {
			alts[i] = oneLine(a, 120)
		}
		more = append(more, "alternatives: "+strings.Join(alts, "; "))
	}
	if len(more) > 0 {
		out = append(out, strings.Join(more, "; "))
	}
	return out
}

// decisionsText is the decisions part of ralph analyze: counts, then each
// notable decision with why.
func (s DecisionStats) text() []string {
	if s.Total == 0 {
		return nil
	}
	head := kindList(s.Total, s.ByKind)
	if s.ByPerson+s.ByAgent > 0 {
		head += fmt.Sprintf(" (%d by the person, %d by agents)", s.ByPerson, s.ByAgent)
	}
	lines := []string{head}
	plain := func(x string) string { return x }
	for _, d := range s.Notable {
		line := "  "
		if !d.Time.IsZero() {
			line += d.Time.Local().Format("15:04:05") + " "
		}
		lines = append(lines, line+decisionHead(d, plain, plain))
		for _, w := range decisionWhy(d) {
			lines = append(lines, "      "+w)
		}
	}
	if s.MoreNotable > 0 {
		lines = append(lines, fmt.Sprintf("  … and %d more in decisions.jsonl", s.MoreNotable))
	}
	return lines
}
