package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ralph-dev/ralph/coordinator/remote"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
	"github.com/ralph-dev/ralph/workers/workerstest"
)

// travels is how every flag of the settings table travels to Temporal,
// by name: the session's rows, the loop's and the engine's.
func travels() map[string]travel {
	m := map[string]travel{}
	for _, r := range sessionSettings() {
		if r.flag != "" {
			m[r.flag] = r.temporal
		}
	}
	for _, s := range runFlags() {
		m[s.name] = s.temporal
	}
	for _, s := range engineFlags() {
		m[s.name] = s.temporal
	}
	return m
}

// faceFlags are the flags of ralph (a one-shot), ralph run and ralph
// chat, read off the command definitions: name → the commands that take it.
func faceFlags(t *testing.T) map[string][]string {
	flags, _ := faceFlagsShort(t)
	return flags
}

// faceFlagsShort is faceFlags, and each flag's one-letter name.
func faceFlagsShort(t *testing.T) (map[string][]string, map[string]string) {
	t.Helper()
	root := (&cli{version: "test"}).command()
	flags, short := map[string][]string{}, map[string]string{}
	for _, name := range []string{"", "run", "chat"} {
		cmd := root
		if name != "" {
			var err error
			if cmd, _, err = root.Find([]string{name}); err != nil || cmd.Name() != name {
				t.Fatalf("no command %q: %v", name, err)
			}
		}
		visit := func(f *pflag.Flag) {
			if f.Name != "help" && f.Name != "version" {
				flags[f.Name] = append(flags[f.Name], cmd.Name())
				short[f.Name] = f.Shorthand
			}
		}
		cmd.LocalFlags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(visit)
	}
	return flags, short
}

// TestEveryFlagSaysHowItTravelsToTemporal walks every flag of ralph,
// ralph run and ralph chat, as their command definitions declare them,
// and fails for one the settings table does not say is carried to the
// workers of a run on Temporal, taken by the ralph that starts it, or
// refused there with a sentence.
func TestEveryFlagSaysHowItTravelsToTemporal(t *testing.T) {
	rows := travels()
	why := map[string]string{}
	for _, r := range sessionSettings() {
		why[r.flag] = r.why
	}
	for _, s := range runFlags() {
		why[s.name] = s.why
	}
	flags, short := faceFlagsShort(t)
	if len(flags) < 40 {
		t.Fatalf("found only %d flags: %v", len(flags), flags)
	}
	for name, cmds := range flags {
		switch tr := rows[name]; {
		case tr == travelUnset:
			t.Errorf("--%s (%s) says neither that it is carried to Temporal nor that it is refused there: give it a row in scripts/settings.go", name, strings.Join(cmds, ", "))
		case tr == refused && why[name] == "":
			t.Errorf("--%s is refused on Temporal without a sentence saying why", name)
		case tr == refused && !strings.Contains(why[name], "--"+name) && (short[name] == "" || !strings.Contains(why[name], "-"+short[name]+":")):
			t.Errorf("--%s is refused on Temporal with a sentence that does not name it: %s", name, why[name])
		}
	}
	for _, r := range sessionSettings() {
		if r.saved && (r.given == nil || r.flag == "" || r.key == "") {
			t.Errorf("the session saves %q, but its row cannot say when its flag is given", r.key)
		}
	}
	for name := range rows {
		if _, ok := flags[name]; !ok {
			t.Errorf("the settings table has a row for --%s, which no command takes", name)
		}
	}
}

// samples are values the walk gives string flags that take only some.
var samples = map[string]string{
	"model": "other-model", "base-url": "http://models.example/v1", "sandbox": "read-only", "permission-mode": "plan",
	"on-error": "skip", "until": "tasks_done >= 1", "breaker": "no_progress >= 9", "verify": "false", "agent": "claude",
	"review": "end", "reviewer": "codex", "engine": "temporal", "address": "127.0.0.1:1", "output-format": "json", "style": "dark",
	"serve": "127.0.0.1:0", "tracker": "files", "wait-for-answers": "5m", "disallowed-tools": "Write", "disallowedTools": "Write",
	"allowed-tools": "Bash(go test:*)", "allowedTools": "Bash(go test:*)", "agent-arg": "--x", "prompt-template": "p.tmpl", "session": "walk", "resume": "walk",
}

// startFor is what ralph run --engine temporal ARGS would start the run
// on Temporal with, or the sentence it is refused with.
func startFor(t *testing.T, args ...string) (remote.Start, error) {
	t.Helper()
	c := &cli{version: "test"}
	root := c.command()
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	var start remote.Start
	var startErr error
	run.RunE = func(cmd *cobra.Command, _ []string) error {
		changed := cmd.Flags().Changed
		c.f.maxWaitSet = changed("max-wait")
		settle := func(saved *memory.RunConfig) (*memory.RunConfig, error) {
			rc := c.f.run
			rc.Parallel = c.f.parallel
			return settleRun(saved, rc, changed)
		}
		start, startErr = c.temporalStart(settle, config.Config{MaxWait: config.DefaultMaxWait}, changed, false)
		return nil
	}
	root.SetArgs(append([]string{"run"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("ralph run %s: %v", strings.Join(args, " "), err)
	}
	return start, startErr
}

// walkArg is the word the walk gives flag f: a sample value it takes, a
// value of its type otherwise.
func walkArg(t *testing.T, f *pflag.Flag) string {
	arg := "--" + f.Name
	switch v, ok := samples[f.Name]; {
	case ok:
		arg += "=" + v
	case f.Value.Type() == "bool":
	case f.Value.Type() == "duration":
		arg += "=7s"
	case f.Name == "dir" || f.Name == "add-dir":
		arg += "=" + t.TempDir()
	default:
		arg += "=1"
	}
	return arg
}

// TestEachFlagTravelsAsItsRowSays walks every row of the settings table
// through every face. Locally (a one-shot, chat, a script, ralph run)
// each flag a face takes must change what the face opens the project
// with, or shows with (walkLocalFaces). On Temporal, ralph run --engine
// temporal gets each of its flags in turn: a carried flag changes what
// the workers get, a refused one stops the start with its sentence, and
// one taken here changes nothing the workers get.
func TestEachFlagTravelsAsItsRowSays(t *testing.T) {
	// --agent=claude needs a claude on PATH to be carried; the row is
	// about the flag, not the CLI, so a stand-in serves on a machine
	// without Claude Code.
	workerstest.StandInOnPath(t, "claude")
	workerstest.StandInOnPath(t, "codex")
	t.Run("local", func(t *testing.T) {
		walkLocalFaces(t, func(f *pflag.Flag) string { return walkArg(t, f) })
	})
	t.Run("temporal", func(t *testing.T) {
		walkTemporal(t)
	})
}

// walkTemporal is the walk's Temporal face.
func walkTemporal(t *testing.T) {
	base, err := startFor(t)
	if err != nil {
		t.Fatal(err)
	}
	rows := travels()
	for name, cmds := range faceFlags(t) {
		if !strings.Contains(strings.Join(cmds, " "), "run") {
			continue // not a flag ralph run takes
		}
		fl := (&cli{}).command().PersistentFlags().Lookup(name)
		if fl == nil {
			run, _, _ := (&cli{}).command().Find([]string{"run"})
			fl = run.Flags().Lookup(name)
		}
		arg := walkArg(t, fl)
		start, err := startFor(t, arg)
		switch rows[name] {
		case carried:
			if err != nil {
				t.Errorf("%s is carried, but the start was refused: %v", arg, err)
			} else if reflect.DeepEqual(start, base) {
				t.Errorf("%s is carried, but the workers would get the same run as without it: %+v", arg, start)
			}
		case refused:
			if err == nil {
				t.Errorf("%s is refused on Temporal, but the start went on: %+v", arg, start)
			}
		case here:
			if err != nil {
				t.Errorf("%s is taken here, but the start was refused: %v", arg, err)
			} else if !reflect.DeepEqual(start, base) {
				t.Errorf("%s is taken here, but the workers would get it: %+v", arg, start)
			}
		}
	}
}

// TestLooseningSettingsAreRefusedBeforeTheStart: the settings a worker
// could never take are refused in one sentence before anything starts.
func TestLooseningSettingsAreRefusedBeforeTheStart(t *testing.T) {
	for _, args := range [][]string{
		{"--sandbox", "danger-full-access"},
		{"--dangerously-skip-permissions"},
		{"--agent-arg=--dangerously-skip-permissions", "--agent", "claude"},
		{"--agent", "exec:./run.sh"},
		{"--add-dir", "/"},
	} {
		_, err := startFor(t, args...)
		if err == nil || strings.Contains(strings.TrimSuffix(err.Error(), "."), "\n") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
