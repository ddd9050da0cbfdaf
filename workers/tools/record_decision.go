package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers"
)

// RecordDecisionParams are record_decision's arguments. Alternatives is
// decoded leniently (one string is a list of one), so its schema type is
// given by tags.
type RecordDecisionParams struct {
	Decision     string          `json:"decision" required:"true" description:"what you decided, one sentence"`
	Reason       string          `json:"reason" required:"true" description:"why"`
	Confidence   *float64        `json:"confidence" minimum:"0" maximum:"1" description:"how sure you are, 0 to 1"`
	Alternatives json.RawMessage `json:"alternatives" type:"array" items:"string" description:"the options you did not take"`
}

// Bounds on what one record keeps: a decision is a sentence, its reason a
// paragraph.
const (
	decisionMax     = 500
	reasonMax       = 2000
	alternativeMax  = 300
	alternativesMax = 10
)

// newRecordDecisionTool is record_decision{decision, reason, confidence?,
// alternatives?}: an agent's own choice, handed to record with the kind
// "agent_decision" and the agent and task of the caller (WithCaller).
// record publishes it where the run's other decisions go, so the
// session's one recorder writes it to decisions.jsonl.
func newRecordDecisionTool(record func(memory.DecisionRecord) error) Tool {
	return NewTool(Def("record_decision"), func(ctx context.Context, args json.RawMessage) workers.Result {
		d, err := parseDecision(args)
		if err != nil {
			return workers.Result{IsError: true, Output: "record_decision: " + err.Error()}
		}
		c := CallerOf(ctx)
		d.Agent, d.Task = c.Agent, c.Task
		if err := record(d); err != nil {
			return workers.Result{IsError: true, Output: "could not record the decision: " + err.Error()}
		}
		return workers.Result{Output: "recorded: " + d.Detail}
	})
}

// parseDecision checks record_decision's arguments and makes the record.
func parseDecision(args json.RawMessage) (memory.DecisionRecord, error) {
	var a RecordDecisionParams
	if err := json.Unmarshal(args, &a); err != nil {
		return memory.DecisionRecord{}, fmt.Errorf(`it needs {"decision": "...", "reason": "...", "confidence": 0.8, "alternatives": ["..."]}: %w`, err)
	}
	a.Decision, a.Reason = strings.TrimSpace(a.Decision), strings.TrimSpace(a.Reason)
	switch {
	case a.Decision == "":
		return memory.DecisionRecord{}, fmt.Errorf("decision is empty; say what you decided")
	case a.Reason == "":
		return memory.DecisionRecord{}, fmt.Errorf("reason is empty; say why you decided it")
	case a.Confidence != nil && (math.IsNaN(*a.Confidence) || *a.Confidence < 0 || *a.Confidence > 1):
		return memory.DecisionRecord{}, fmt.Errorf("confidence is %v; give a number from 0 (a guess) to 1 (certain)", *a.Confidence)
	}
	d := memory.DecisionRecord{Time: time.Now().UTC(), Kind: "agent_decision", By: memory.DecidedByAgent,
		Detail: text.Clip(a.Decision, decisionMax), Reason: text.Clip(a.Reason, reasonMax), Confidence: a.Confidence}
	alts, err := alternatives(a.Alternatives)
	if err != nil {
		return memory.DecisionRecord{}, err
	}
	for _, alt := range alts[:min(len(alts), alternativesMax)] {
		d.Alternatives = append(d.Alternatives, text.Clip(alt, alternativeMax))
	}
	return d, nil
}

// alternatives takes a list of strings, or one string, which models
// sometimes send for a list of one.
func alternatives(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, s := range list {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one = strings.TrimSpace(one); one != "" {
			return []string{one}, nil
		}
		return nil, nil
	}
	return nil, fmt.Errorf("alternatives must be a list of strings")
}
