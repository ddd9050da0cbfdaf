package beads

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Issue is one bead as bd's JSON gives it, the fields ralph reads.
type Issue struct {
	ID                 string       `json:"id"`
	Title              string       `json:"title"`
	Description        string       `json:"description,omitempty"`
	Design             string       `json:"design,omitempty"`
	AcceptanceCriteria string       `json:"acceptance_criteria,omitempty"`
	Notes              string       `json:"notes,omitempty"`
	Status             string       `json:"status,omitempty"`
	Priority           int          `json:"priority"`
	IssueType          string       `json:"issue_type,omitempty"`
	Assignee           string       `json:"assignee,omitempty"`
	CloseReason        string       `json:"close_reason,omitempty"`
	Parent             string       `json:"parent,omitempty"`
	Dependencies       []Dependency `json:"dependencies,omitempty"`
}

// Dependency is one edge of an issue: it (issue_id) depends on
// depends_on_id, of a type (blocks, parent-child, related, ...). bd show
// prints the issue depended on instead, with dependency_type; both read
// into this.
type Dependency struct {
	IssueID        string `json:"issue_id,omitempty"`
	DependsOnID    string `json:"depends_on_id,omitempty"`
	Type           string `json:"type,omitempty"`
	ID             string `json:"id,omitempty"`
	DependencyType string `json:"dependency_type,omitempty"`
}

// Target is the issue depended on, and Kind the edge's type, whichever
// shape bd printed.
func (d Dependency) Target() string {
	if d.DependsOnID != "" {
		return d.DependsOnID
	}
	return d.ID
}

// Kind is the dependency's type.
func (d Dependency) Kind() string {
	if d.Type != "" {
		return d.Type
	}
	return d.DependencyType
}

// Blocks reports whether the edge orders work: a blocking dependency,
// not a parent, a relation or a discovery.
func (d Dependency) Blocks() bool {
	switch d.Kind() {
	case "", "blocks", "conditional-blocks", "waits-for":
		return true
	}
	return false
}

// Statuses bd stores.
const (
	StatusOpen       = "open"
	StatusInProgress = "in_progress"
	StatusClosed     = "closed"
)

// TypeEpic is an epic's issue_type.
const TypeEpic = "epic"

// ParseIssues reads bd's JSON answer holding issues: an array, or one
// issue (bd update and bd close print arrays, bd create an object).
func ParseIssues(data json.RawMessage) ([]Issue, error) {
	if len(data) > 0 && data[0] == '{' {
		var one Issue
		if err := json.Unmarshal(data, &one); err != nil {
			return nil, err
		}
		return []Issue{one}, nil
	}
	var out []Issue
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Parse reads bd's printed output (either JSON shape) as issues: for
// tests and recorded output.
func Parse(out []byte) ([]Issue, error) {
	data, err := decode(out)
	if err != nil {
		return nil, err
	}
	return ParseIssues(data)
}

func (c *Client) issues(ctx context.Context, args ...string) ([]Issue, error) {
	data, err := c.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	out, err := ParseIssues(data)
	if err != nil {
		return nil, &Error{Args: args, Msg: fmt.Sprintf("its answer is not a list of issues: %v", err), err: err}
	}
	return out, nil
}

// List is every issue under parent (all of them for ""), closed ones
// too, with their dependencies.
func (c *Client) List(ctx context.Context, parent string) ([]Issue, error) {
	args := []string{"list", "--all", "--limit", "0"}
	if parent != "" {
		args = append(args, "--parent", parent)
	}
	return c.issues(ctx, args...)
}

// Ready is what bd says can be worked now under parent (everything for
// ""): open, not blocked, not deferred, not claimed.
func (c *Client) Ready(ctx context.Context, parent string) ([]Issue, error) {
	args := []string{"ready", "--limit", "0"}
	if parent != "" {
		args = append(args, "--parent", parent)
	}
	return c.issues(ctx, args...)
}

// Epics are the epics, closed ones too.
func (c *Client) Epics(ctx context.Context) ([]Issue, error) {
	return c.issues(ctx, "list", "--all", "--limit", "0", "--type", TypeEpic)
}

// Show is one issue with its dependencies.
func (c *Client) Show(ctx context.Context, id string) (Issue, error) {
	is, err := c.issues(ctx, "show", id)
	if err != nil {
		return Issue{}, err
	}
	if len(is) == 0 {
		return Issue{}, &Error{Args: []string{"show", id}, Msg: "it printed no issue"}
	}
	return is[0], nil
}

// Claim claims id for the actor, atomically: bd refuses when another
// actor holds it.
func (c *Client) Claim(ctx context.Context, id string) error {
	_, err := c.run(ctx, "update", id, "--claim")
	return err
}

// Unclaim releases id, only while the actor still holds it.
func (c *Client) Unclaim(ctx context.Context, id, reason string) error {
	_, err := c.run(ctx, "unclaim", id, "--if-assignee", c.Actor, "--reason", reason)
	return err
}

// Close closes id with a reason.
func (c *Client) Close(ctx context.Context, id, reason string) error {
	_, err := c.run(ctx, "close", id, "--reason", reason)
	return err
}

// Reopen opens a closed id again.
func (c *Client) Reopen(ctx context.Context, id, reason string) error {
	_, err := c.run(ctx, "reopen", id, "--reason", reason)
	return err
}

// NewIssue is an issue to create.
type NewIssue struct {
	Title, Description string
	Type               string // task, epic, ...
	Priority           int
	Parent             string
}

// Create creates an issue and returns its id.
func (c *Client) Create(ctx context.Context, n NewIssue) (string, error) {
	args := []string{"create", n.Title, "--type", n.Type, "--priority", strconv.Itoa(n.Priority)}
	if n.Description != "" {
		args = append(args, "--description", n.Description)
	}
	if n.Parent != "" {
		args = append(args, "--parent", n.Parent)
	}
	is, err := c.issues(ctx, args...)
	if err != nil {
		return "", err
	}
	if len(is) == 0 || is[0].ID == "" {
		return "", &Error{Args: args, Msg: "it printed no issue id"}
	}
	return is[0].ID, nil
}

// DependOn records that id cannot start before blocker is closed.
func (c *Client) DependOn(ctx context.Context, id, blocker string) error {
	_, err := c.run(ctx, "dep", "add", id, blocker)
	return err
}
