// Package beads drives Beads' own command line, bd, for ralph's Beads
// tracker (ralph run --tracker beads). Every bd ralph starts goes through
// Client.run: one place that sets the directory, the environment (the
// person's, less anything that looks like a credential, with the actor
// ralph claims as), the time limit and --json, reads stdout as the answer
// and keeps stderr, where bd writes its warnings, for the error's
// sentence.
//
// bd prints two JSON shapes: raw values (an array of issues, an object
// with schema_version merged in), its default in 1.x, and the envelope
// {schema_version, data} that BD_JSON_ENVELOPE=1 selects and that
// becomes the default in bd 2.0. decode accepts both.
package beads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/memory/childenv"
)

// ErrMissing is bd not found on PATH.
var ErrMissing = errors.New("the bd command (Beads) is not installed or not on PATH")

// ErrNoDatabase is a directory with no Beads database: no .beads in it or
// above it, and no BEADS_DIR.
var ErrNoDatabase = errors.New("no Beads database")

// DefaultTimeout bounds one bd command: the embedded database opens in
// well under a second, but a lock held by another bd is waited for.
const DefaultTimeout = 2 * time.Minute

// Client runs bd in one directory.
type Client struct {
	// Dir is where bd runs (the project root); bd finds .beads there or
	// above, or where BEADS_DIR says.
	Dir string
	// Actor is who bd records as claiming and closing (BEADS_ACTOR).
	Actor string
	// Bin is the bd program; "" is bd on PATH.
	Bin string
	// Timeout bounds each command; 0 is DefaultTimeout.
	Timeout time.Duration
}

// Error is a bd command that failed, said in one sentence: what bd said
// (its JSON error, else the last line of its stderr) and how it ended.
type Error struct {
	Args   []string
	Msg    string
	Stderr string
	err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("bd %s failed: %s", strings.Join(e.Args, " "), e.Msg)
}

func (e *Error) Unwrap() error { return e.err }

// program is the bd to run, or ErrMissing.
func (c *Client) program() (string, error) {
	bin := c.Bin
	if bin == "" {
		bin = "bd"
	}
	// Found once, off the project's PATH entries (childenv.Program): a
	// bd the model wrote there would run as the person.
	path, err := childenv.Program(bin)
	if err != nil {
		return "", ErrMissing
	}
	return path, nil
}

// Available reports whether bd can be run: ErrMissing when it cannot.
func (c *Client) Available() error {
	_, err := c.program()
	return err
}

// run runs bd with args and --json and returns the JSON answer on its
// stdout, unwrapped from bd 2.0's envelope. A JSON error object (bd
// prints one on stdout under --json) is an *Error with bd's words.
func (c *Client) run(ctx context.Context, args ...string) (json.RawMessage, error) {
	bin, err := c.program()
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := append(append([]string{}, args...), "--json")
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Dir = c.Dir
	// A bd killed at the timeout may leave a child holding its output:
	// Wait gives up on the pipes rather than on ralph.
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = childenv.PersonEnv(childenv.Scrub(os.Environ()))
	if c.Actor != "" {
		cmd.Env = append(cmd.Env, "BEADS_ACTOR="+c.Actor)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	data, derr := decode(stdout.Bytes())
	if derr == nil && runErr == nil {
		return data, nil
	}
	e := &Error{Args: args, Stderr: stderr.String(), err: runErr}
	var be *bdError
	switch {
	case errors.As(derr, &be):
		e.Msg = be.msg
	case ctx.Err() != nil:
		e.Msg, e.err = fmt.Sprintf("no answer within %s", timeout), ctx.Err()
	case runErr != nil:
		e.Msg = stderrMessage(stderr.String())
		if e.Msg == "" {
			e.Msg = runErr.Error()
		}
	default:
		e.Msg, e.err = fmt.Sprintf("its output is not JSON bd prints: %v", derr), derr
	}
	if noDatabase(e.Msg) || noDatabase(e.Stderr) {
		e.err = ErrNoDatabase
	}
	return nil, e
}

// noDatabase reports whether bd's words say it found no database.
func noDatabase(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"no active beads workspace", "no beads database", "database not initialized", "not a beads workspace"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// stderrMessage is what bd said on stderr when it failed: its "Error:"
// line, else its first line of words (not a hint, not JSON), else the
// error of a JSON object there (bd update prints one on stderr, with the
// failure of each issue).
func stderrMessage(stderr string) string {
	var words, fromJSON string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "Error:"):
			return strings.TrimSpace(strings.TrimPrefix(l, "Error:"))
		case strings.HasPrefix(l, "{"):
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(l), &obj) == nil && fromJSON == "" {
				fromJSON, _ = errorText(obj)
			}
		case words == "" && !strings.HasPrefix(l, "Hint:") && !strings.HasPrefix(l, "Warning:"):
			words = l
		}
	}
	if words != "" {
		return words
	}
	return fromJSON
}

// bdError is the JSON error object bd prints on stdout.
type bdError struct{ msg string }

func (e *bdError) Error() string { return e.msg }

// decode reads one JSON answer of bd: the envelope's data, or the raw
// value (from which a schema_version key bd merged in is left as it is:
// the types here ignore it). An object with an "error" key is bd's
// error, a *bdError.
func decode(out []byte) (json.RawMessage, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, errors.New("bd printed nothing")
	}
	var v json.RawMessage
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, err
	}
	if v[0] != '{' {
		return v, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil {
		return nil, err
	}
	if data, ok := obj["data"]; ok {
		if _, versioned := obj["schema_version"]; versioned {
			// bd 2.0's envelope, whose data may hold the error.
			var inner map[string]json.RawMessage
			if json.Unmarshal(data, &inner) == nil {
				if msg, ok := errorText(inner); ok {
					return nil, &bdError{msg: msg}
				}
			}
			return data, nil
		}
	}
	if msg, ok := errorText(obj); ok {
		return nil, &bdError{msg: msg}
	}
	return v, nil
}

// errorText is the message of bd's JSON error object, with its hint.
func errorText(obj map[string]json.RawMessage) (string, bool) {
	raw, ok := obj["error"]
	if !ok {
		return "", false
	}
	var msg, hint string
	if json.Unmarshal(raw, &msg) != nil {
		msg = string(raw)
	}
	if h, ok := obj["hint"]; ok && json.Unmarshal(h, &hint) == nil && hint != "" {
		msg = strings.TrimSuffix(msg, ".") + " (" + hint + ")"
	}
	return msg, true
}
