package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/rootfs"
)

// StateVersion is the schema version of session.json this ralph writes.
// Older versions are read and upgraded; newer ones are refused rather than
// half understood.
const StateVersion = 1

// Errors callers branch on.
var (
	// ErrNoSession: the project has no session (yet), or not the one asked for.
	ErrNoSession = errors.New("no session")
	// ErrCorruptState: session.json exists but cannot be parsed.
	ErrCorruptState = errors.New("corrupt session state")
	// ErrNewerState: session.json was written by a newer ralph.
	ErrNewerState = errors.New("session state written by a newer ralph")
)

// State is the machine-readable summary in .ralph/session.json (and a copy
// in each session's directory). It is written only through Session.SaveState.
type State struct {
	Version     int                `json:"version"`
	SessionID   string             `json:"session_id"`
	Status      string             `json:"status"`
	Mode        string             `json:"mode"`
	Model       string             `json:"model"`
	Iteration   int                `json:"iteration"`
	Turns       int                `json:"turns"`
	Usage       conversation.Usage `json:"usage"`
	CostUSD     *float64           `json:"cost_usd"`
	Tasks       TaskCounts         `json:"tasks"`
	CurrentTask string             `json:"current_task,omitempty"`
	// Pausing says a running task loop was paused and waits for the tasks
	// in flight to finish; its status is "paused" once they have.
	Pausing    bool   `json:"pausing,omitempty"`
	Retries    int    `json:"retries"`
	Errors     int    `json:"errors"`
	Interrupts int    `json:"interruptions"`
	Error      string `json:"error,omitempty"`
	// Question is the question the session waits on, while its status is
	// waiting_for_input.
	Question *Question `json:"question,omitempty"`
	// Run is how a task loop was started, so `ralph resume` goes on the
	// same way; nil for other modes.
	Run *RunConfig `json:"run,omitempty"`
	// Seal is the HMAC of Run and SessionID under the person's state key
	// (see Seal): a resume uses Run only when it matches, since a command
	// can write this file.
	Seal string `json:"seal,omitempty"`
	// Generation counts the records of this session whose sealed part
	// (Run) changed, 1 for the first; the seal covers it, and ralph's
	// state directory keeps the latest (Generations), so that an older
	// record ralph once sealed, put back by a command, is told from the
	// latest. 0 in a record of a ralph older than the count.
	Generation uint64 `json:"generation,omitempty"`
	// Workers are the task loop's worktrees while it runs (--worktrees).
	Workers []Worker `json:"workers,omitempty"`
	// Wait is what a running task loop waits for before it starts
	// another task (a limit to reset, the breaker's cooldown); nil when
	// it waits for nothing.
	Wait *Wait `json:"wait,omitempty"`
	// Breaker is the task loop's circuit breaker when it is not closed.
	Breaker *Breaker `json:"breaker,omitempty"`
	// Todo is the model's working list as it set it last (update_plan),
	// so a resumed session has it back; nil when it set none.
	Todo *TodoList `json:"todo,omitempty"`
	// Recovered says what crash recovery did to this session, if anything.
	Recovered string    `json:"recovered,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// Question is a question a running ralph waits on: an approval to run a
// command, a yes/no question of the task loop, or the model's own
// question (ask_user). Text is what its terminal shows, with every
// control character made visible.
type Question struct {
	// ID tells one question from the next, so an answer given to a
	// question a person saw never goes to another (ralph answer --id).
	ID   int    `json:"id"`
	Kind string `json:"kind"` // approval, confirm or ask_user
	Text string `json:"text"`
	// Answers are the answers it takes: y and n, and always where
	// offered; none for the model's question, which takes any words.
	Answers []string  `json:"answers"`
	Since   time.Time `json:"since"`
	// Plain is the question for a face that shows its answers as
	// buttons (ralph serve's page): Text without the keys a terminal
	// takes ("[y]es / [n]o", "? explains"); "" where Text has none.
	Plain string `json:"plain,omitempty"`
	// Details is what the terminal's "?" explains, in the words of
	// Plain; "" where there is nothing to explain.
	Details string `json:"details,omitempty"`
}

// AnswerCommand is the command that answers q, as every face shows it.
func (q Question) AnswerCommand() string {
	answers := strings.Join(q.Answers, "|")
	switch {
	case q.Kind == "ask_user":
		answers = `"your answer"`
	case answers == "":
		answers = "y|n"
	}
	return fmt.Sprintf("ralph answer --id %d %s", q.ID, answers)
}

// Worker is a task being worked in a git worktree of its own.
type Worker struct {
	Task string `json:"task"`
	// Dir is the worktree's project directory, relative to the project.
	Dir    string `json:"dir"`
	Branch string `json:"branch"`
}

// RunConfig is the configuration of a task loop (`ralph run`), saved in
// session.json so that a resumed loop works as the original one did. The
// approval flag (--yes) is deliberately not saved: approval is given by
// the person each time ralph starts.
type RunConfig struct {
	Agent string `json:"agent,omitempty"`
	// AgentArgs go on the external agent's command line (--agent-arg).
	AgentArgs []string `json:"agent_args,omitempty"`
	Verify    string   `json:"verify,omitempty"`
	// VerifyFromPlan says Verify holds a plan's Validation Commands, which
	// ralph put there, not the person's --verify: they never leave the
	// sandbox (workers.RunVerify).
	VerifyFromPlan bool     `json:"verify_from_plan,omitempty"`
	Parallel       int      `json:"parallel,omitempty"`
	Until          string   `json:"until,omitempty"`
	Breaker        string   `json:"breaker,omitempty"`
	MaxCost        float64  `json:"max_cost,omitempty"`
	TaskTimeout    Duration `json:"task_timeout,omitempty"`
	OnError        string   `json:"on_error,omitempty"`
	Retries        int      `json:"retries"`
	MaxIterations  int      `json:"max_iterations,omitempty"`
	// BreakerCooldown is how long the tripped breaker waits before it
	// lets one task through when nobody can be asked (--breaker-cooldown;
	// 0: the default).
	BreakerCooldown Duration `json:"breaker_cooldown,omitempty"`
	// Commit makes one git commit per done task (--commit); Worktrees
	// works each task in a git worktree of its own and merges it back
	// (--worktrees, which implies Commit).
	Commit    bool `json:"commit,omitempty"`
	Worktrees bool `json:"worktrees,omitempty"`
	// PromptTemplate is the absolute path of --prompt-template, the Go
	// text/template the loop's prompts are made from; "" leaves it to
	// prompt_template in the config, else ralph's own prompt. It is read
	// again on resume.
	PromptTemplate string `json:"prompt_template,omitempty"`
	// Plan is the plan file the loop works (ralph run PLAN), relative to
	// the project root; "" for RALPH_TASKS.md.
	Plan string `json:"plan,omitempty"`
	// ArchiveDone moves the plan to plans_dir/completed when its last
	// task is done (--archive-done).
	ArchiveDone bool `json:"archive_done,omitempty"`
	// Review is when reviewers read the work (--review): "task" after
	// each task passes verify, "end" once after the last; "" never.
	// ReviewRounds bounds its review-and-fix rounds (0: 3).
	Review       string `json:"review,omitempty"`
	ReviewRounds int    `json:"review_rounds,omitempty"`
	// Reviewer is the agent the reviewers run as (--reviewer: claude,
	// codex, exec:CMD); "" for ralph's own child agents.
	Reviewer string `json:"reviewer,omitempty"`
}

// Why a task loop waits (Wait.Reason).
const (
	WaitRateLimit  = "rate_limit"  // the model endpoint's rate limit
	WaitUsageLimit = "usage_limit" // an external agent's usage limit
	WaitBreaker    = "breaker"     // the circuit breaker's cooldown
	WaitDiskFull   = "disk_full"   // the project's file system is full
)

// Wait is a task loop waiting until a time before it starts another task.
type Wait struct {
	Reason string    `json:"reason"`
	Until  time.Time `json:"until"`
	// Text says it for people: "waiting for the rate limit until 14:05".
	Text string `json:"text"`
}

// The circuit breaker's states (Breaker.State).
const (
	BreakerClosed   = "closed"    // tasks run
	BreakerOpen     = "open"      // tripped: no task starts until Until
	BreakerHalfOpen = "half_open" // one task runs to test the water
)

// Breaker is the task loop's circuit breaker once it has tripped.
type Breaker struct {
	State string `json:"state"`
	// Until is when an open breaker lets one task through.
	Until time.Time `json:"until,omitzero"`
	// Cooldown is how long it stays open this time; it doubles with each
	// failed half-open task.
	Cooldown Duration `json:"cooldown"`
	// Trips counts how often it opened in this run.
	Trips int `json:"trips"`
}

// Duration is a time.Duration written as people read it ("30m0s").
type Duration time.Duration

// MarshalText writes the duration in Go's notation.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads Go's duration notation.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// CorruptStateError names the damaged file.
type CorruptStateError struct {
	Path string
	Err  error
}

func (e *CorruptStateError) Error() string {
	return fmt.Sprintf("%s is corrupt: %v", e.Path, e.Err)
}

// Is matches ErrCorruptState.
func (e *CorruptStateError) Is(target error) bool { return target == ErrCorruptState }

func (e *CorruptStateError) Unwrap() error { return e.Err }

// notAFile is a record that is not a regular file, said as the reason
// it is corrupt.
type notAFile struct{ *rootfs.NotRegularError }

func (e notAFile) Error() string { return "it is " + e.Kind() + ", not a regular file" }
func (e notAFile) Unwrap() error { return e.NotRegularError }

// LoadState reads the project's .ralph/session.json.
func LoadState(fs afero.Fs, root string) (State, error) {
	return readState(fs, filepath.Join(root, SessionFile))
}

// RecordedState is the state of the session worked on last, by the
// sessions' own records: the summary .ralph/session.json is derived from
// them and not made durable by itself (see Session.SaveState), so after a
// crash of the machine it may be missing or behind them. Of the session
// the summary names and the newest session directory, the own record
// updated last wins; the summary stands when neither has one. A corrupt
// or too new summary is reported as LoadState reports it, so that the
// caller sets it aside or refuses it; ErrNoSession means there is no
// session at all. names is the listing of the sessions (SessionDirNames).
func RecordedState(fs afero.Fs, root string, names []string) (State, error) {
	sum, err := LoadState(fs, root)
	if err != nil && !errors.Is(err, ErrNoSession) {
		return State{}, err
	}
	best, found := sum, err == nil
	consider := func(id string) {
		own, oerr := LoadSessionState(fs, root, id)
		if oerr == nil && (!found || own.SessionID == best.SessionID && !own.UpdatedAt.Before(best.UpdatedAt) || own.UpdatedAt.After(best.UpdatedAt)) {
			best, found = own, true
		}
	}
	if err == nil {
		consider(sum.SessionID)
	}
	for _, id := range lastSaved(fs, root, newestSessions(names)) {
		if id != sum.SessionID {
			consider(id)
		}
	}
	if !found {
		return State{}, err
	}
	return best, nil
}

// newestSessions are the session directories of names created in the
// newest second (ids sort by their time, to the second, then by chance).
func newestSessions(names []string) []string {
	second := func(id string) string { s, _, _ := strings.Cut(id, "-"); return s }
	var newest []string
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "."):
		case len(newest) == 0 || second(n) > second(newest[0]):
			newest = append(newest[:0], n)
		case second(n) == second(newest[0]):
			newest = append(newest, n)
		}
	}
	return newest
}

// lastSaved narrows sessions created in the same second to the one whose
// own record was written last, by a stat of each: a script calling ralph
// in a loop starts a score of sessions a second, and reading and decoding
// every one of their records at each start cost more than half a
// millisecond. The file's time is only a preselection: RecordedState
// still compares the record's own clock with the summary's. When no
// record can be stat'ed, all are read.
func lastSaved(fs afero.Fs, root string, ids []string) []string {
	if len(ids) < 2 {
		return ids
	}
	var last string
	var at time.Time
	for _, id := range ids {
		fi, err := fs.Stat(filepath.Join(SessionDir(root, id), "session.json"))
		if err == nil && (last == "" || fi.ModTime().After(at)) {
			last, at = id, fi.ModTime()
		}
	}
	if last == "" {
		return ids
	}
	return []string{last}
}

// LoadSessionState reads the copy in a session's own directory.
func LoadSessionState(fs afero.Fs, root, id string) (State, error) {
	return readState(fs, filepath.Join(SessionDir(root, id), "session.json"))
}

func readState(fs afero.Fs, path string) (st State, err error) {
	// The loader must never panic whatever the bytes; a panic in the JSON
	// decoder would be a bug, but the user's state matters more.
	defer func() {
		if r := recover(); r != nil {
			st, err = State{}, &CorruptStateError{Path: path, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	data, err := rootfs.ReadSmall(fs, path, MaxSessionFile)
	if errors.Is(err, os.ErrNotExist) {
		return State{}, NoSessionf("%s does not exist", path)
	}
	var nr *rootfs.NotRegularError
	if errors.As(err, &nr) {
		// A FIFO (say) a command put there is no record: damaged, set
		// aside and rebuilt as a record that does not parse is, never
		// waited on.
		return State{}, &CorruptStateError{Path: path, Err: notAFile{nr}}
	}
	if errors.Is(err, rootfs.ErrTooLarge) {
		// The sentence names the file, its size and the limit already.
		return State{}, err
	}
	if err != nil {
		return State{}, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, &CorruptStateError{Path: path, Err: err}
	}
	switch {
	case st.Version > StateVersion:
		return State{}, fmt.Errorf("%w: %s has schema version %d, this ralph reads up to %d; upgrade ralph", ErrNewerState, path, st.Version, StateVersion)
	case st.SessionID == "" || !validStatus(st.Status):
		return State{}, &CorruptStateError{Path: path, Err: fmt.Errorf("missing session id or unknown status %q", st.Status)}
	}
	st.Version = StateVersion
	return st, nil
}

// SavedStatuses are the statuses session.json may hold: the one list
// that reading a state file checks, and that the faces' words for them
// (eventwords.Status) are tested against, so a new status cannot reach a
// page raw.
var SavedStatuses = []string{StatusNone, StatusRunning, StatusPaused, StatusInterrupted, StatusCompleted, StatusFailed, StatusWaitingForInput}

func validStatus(s string) bool {
	for _, x := range SavedStatuses {
		if s == x {
			return true
		}
	}
	return false
}

// SetAside renames a damaged file to <name>.corrupt-<unix time> so nothing
// is silently discarded, and returns the new path.
func SetAside(fs afero.Fs, path string, now time.Time) (string, error) {
	aside := fmt.Sprintf("%s.corrupt-%d", path, now.Unix())
	if err := fs.Rename(path, aside); err != nil {
		return "", fmt.Errorf("set aside %s: %w", path, err)
	}
	return aside, nil
}

// ListSessions returns the ids of the project's sessions, oldest first
// (ids sort by creation time).
func ListSessions(fs afero.Fs, root string) ([]string, error) {
	infos, err := afero.ReadDir(fs, filepath.Join(root, SessionsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var ids []string
	for _, fi := range infos {
		if fi.IsDir() && !strings.HasPrefix(fi.Name(), ".") {
			ids = append(ids, fi.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// latestSession is the session worked on last: of the newest session
// directory and the one .ralph/session.json names (an older session that
// was resumed), the one whose own record was updated last. The summary
// alone is not trusted: a crash between creating a session and updating
// the summary leaves the summary naming the previous session. A session
// opened and left without a word is passed over (worthContinuing).
func latestSession(fs afero.Fs, root string, ids []string) string {
	ids = worthContinuing(fs, root, ids)
	newest := ids[len(ids)-1]
	st, err := LoadState(fs, root)
	if err != nil || st.SessionID == newest || !slices.Contains(ids, st.SessionID) || SessionEmpty(fs, root, st.SessionID) {
		return newest
	}
	named, nerr := LoadSessionState(fs, root, st.SessionID)
	latest, lerr := LoadSessionState(fs, root, newest)
	if nerr == nil && (lerr != nil || named.UpdatedAt.After(latest.UpdatedAt)) {
		return st.SessionID
	}
	return newest
}

// FindSession resolves a session id given in full or as any unique part of
// one (people copy the short random part, or the time); "" means the
// latest.
func FindSession(fs afero.Fs, root, id string) (string, error) {
	ids, err := ListSessions(fs, root)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", NoSessionf("this project has no sessions yet")
	}
	if id == "" {
		return latestSession(fs, root, ids), nil
	}
	var found []string
	for _, x := range ids {
		if x == id {
			return x, nil
		}
		if strings.Contains(x, id) {
			found = append(found, x)
		}
	}
	switch len(found) {
	case 0:
		// What looks like the id, else what the person may have meant
		// at all: the newest sessions.
		if near := NearestSessions(ids, id, 3); len(near) > 0 {
			return "", NoSessionf("no session matches %q; the nearest: %s", id, strings.Join(near, ", "))
		}
		newest := slices.Clone(ids[max(0, len(ids)-3):])
		slices.Reverse(newest)
		return "", NoSessionf("no session matches %q; the newest: %s", id, strings.Join(newest, ", "))
	case 1:
		return found[0], nil
	}
	return "", NoSessionf("%q matches %d sessions; give more of the id", id, len(found))
}

// noSessionError is an ErrNoSession whose message is the whole sentence,
// so that it reads "this project has no sessions yet" rather than
// "no session: this project has no sessions yet".
type noSessionError struct{ msg string }

func (e *noSessionError) Error() string        { return e.msg }
func (e *noSessionError) Is(target error) bool { return target == ErrNoSession }

// NoSessionf is an error that is ErrNoSession for callers that branch on
// it, and says only what it formats.
func NoSessionf(format string, args ...any) error {
	return &noSessionError{fmt.Sprintf(format, args...)}
}
