package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/config"
)

// The local faces of the settings walk: each opens the project through
// c.open, where the walk looks at what it opens it with.
var localFaces = []struct {
	name string
	args []string // the command, before the flag under test
	tail []string // after it
}{
	{name: "one-shot", tail: []string{"--", "hi"}},
	{name: "chat", args: []string{"chat"}},
	{name: "script", args: []string{"script"}, tail: []string{"-"}},
	{name: "run", args: []string{"run"}},
}

// faceOwn are the flags a local face takes that do not open the project
// with anything, each with where its value goes instead. The walk skips
// them; a flag not here must change what the face opens the project
// with, or what it shows with.
var faceOwn = map[string]string{
	"serve":         "serves the web view beside the face (e2e TestServeFlagStopsTheRunFromThePage); the walk starts no server",
	"keep-going":    "ScriptOptions.KeepGoing of ralph script, which the script face reads after the project opened",
	"engine":        "chooses where the loop runs; the Temporal face of the walk checks it",
	"address":       "chooses where the loop runs; the Temporal face of the walk checks it",
	"namespace":     "chooses where the loop runs; the Temporal face of the walk checks it",
	"task-queue":    "chooses where the loop runs; the Temporal face of the walk checks it",
	"tracker":       "files, the sample, is the default tracker; beads needs bd's database before the project opens (e2e beads_test.go)",
	"epic":          "names a Beads epic, which needs bd's database before the project opens (e2e beads_test.go)",
	"print":         "keeps a one-shot without a task from opening the chat shell; the walk's one-shot has a task, so it changes nothing there",
	"output-schema": "the one-shot's output schema, compiled before the project opens and given to its coordinator (e2e TestOutputSchemaOnEachWire)",
	"json-schema":   "the one-shot's output schema inline, as --output-schema (e2e TestOutputSchemaPrintsTheJSONAnswer)",

	// The claude shape's flags (issue 92).
	"stream-shape":                       "the one-shot's lines (OneShot.Shape), which the face prints with after the project opened (TestClaudeShape*, e2e TestClaudeAgentSDK*)",
	"input-format":                       "how the one-shot reads its task from standard input, before the project opens (e2e TestClaudeAgentSDK*)",
	"allow-dangerously-skip-permissions": "Claude Code's leave to choose bypassPermissions, which changes nothing in ralph (claudeflags.go)",
}

// companions are the words a flag needs beside it to be taken at all;
// the walk compares the flag given with them to them alone.
var companions = map[string][]string{
	"fork-session": {"--session=walk"},
}

// conversationSamples are the values a conversation's face takes where
// ralph run's differ: a conversation's --agent is an agent definition.
var conversationSamples = map[string]string{"agent": "def:walk"}

// arrival is what a face hands on from its flags: the options it opens
// the project with (the configuration its overrides settle, the run
// configuration it settles) and what the face itself shows with.
type arrival struct {
	Opts      project.Options
	Cfg       config.Config
	Run       *memory.RunConfig
	RunErr    string
	Format    string
	Color     bool
	Style     string
	Verbose   bool
	FaceError string
}

// errWalked stops a face once the walk has seen what it opens with.
var errWalked = errors.New("walked")

// arrivedAt runs ralph ARGS as face does, with the project's opening
// replaced by a look at its options, and says what arrived. A face that
// stops before it opens the project (bad input) reports that instead.
func arrivedAt(t *testing.T, args ...string) arrival {
	t.Helper()
	var a arrival
	c := &cli{version: "test", shell: ChatShell{Main: func(context.Context, *project.Project, ChatOptions) int { return 0 }}}
	opened := false
	c.opener = func(_ context.Context, o project.Options) (*project.Project, error) {
		opened = true
		// The defaults a flag may turn off (--no-network).
		a.Cfg = config.Config{Network: true}
		if o.Overrides.Apply != nil {
			if err := o.Overrides.Apply(&a.Cfg); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
		}
		if o.Run != nil {
			rc, err := o.Run(nil)
			a.Run = rc
			if err != nil {
				a.RunErr = err.Error()
			}
		}
		o.Overrides.Apply, o.Run, o.Notify, o.Getenv = nil, nil, nil, nil
		a.Opts = o
		a.Format, a.Color, a.Style, a.Verbose = c.format(), c.term.Color, c.term.Style, c.f.conv.verbose
		return nil, errWalked
	}
	root := c.command()
	// The chat face needs a terminal; the walk says it has one.
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := pre(cmd, args); err != nil {
			return err
		}
		c.term.InTTY, c.term.ErrTTY = true, true
		return nil
	}
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if !opened {
		a.FaceError = "the face did not open the project: " + errString(err)
	}
	return a
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// localFaceFlags are the flags of the command args names (none: the
// root command, the one-shot).
func localFaceFlags(t *testing.T, args []string) []*pflag.Flag {
	t.Helper()
	root := (&cli{version: "test"}).command()
	cmd := root
	if len(args) > 0 {
		var err error
		if cmd, _, err = root.Find(args[:1]); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]*pflag.Flag{}
	visit := func(f *pflag.Flag) {
		if f.Name != "help" && f.Name != "version" {
			seen[f.Name] = f
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	var out []*pflag.Flag
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// walkLocalFaces gives every local face each of its flags in turn (arg
// makes the flag's word) and fails for one whose value does not arrive:
// what the face opens the project with, or shows with, is the same as
// without it.
func walkLocalFaces(t *testing.T, arg func(f *pflag.Flag) string) {
	dir := t.TempDir()
	// A session for --resume and --session to name.
	if err := os.MkdirAll(filepath.Join(dir, memory.SessionsDir, "walk"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The one-shot reads piped input; the walk's has none.
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	// Each face stops saying it was walked: not worth reading.
	stdin, stderr := os.Stdin, os.Stderr
	os.Stdin, os.Stderr = null, null
	defer func() { os.Stdin, os.Stderr = stdin, stderr }()
	t.Chdir(dir)
	for _, face := range localFaces {
		t.Run(face.name, func(t *testing.T) {
			words := func(flag ...string) []string {
				return append(append(append(append([]string{}, face.args...), "-C", dir), flag...), face.tail...)
			}
			base := arrivedAt(t, words()...)
			if base.FaceError != "" {
				t.Fatalf("%s alone: %s", face.name, base.FaceError)
			}
			n := 0
			for _, f := range localFaceFlags(t, face.args) {
				if _, ok := faceOwn[f.Name]; ok {
					continue
				}
				n++
				word := arg(f)
				if v, ok := conversationSamples[f.Name]; ok && face.name != "run" {
					word = "--" + f.Name + "=" + v
				}
				base := base
				if with := companions[f.Name]; with != nil {
					base = arrivedAt(t, words(with...)...)
				}
				got := arrivedAt(t, words(append(slices.Clone(companions[f.Name]), word)...)...)
				switch {
				case got.FaceError != "":
					t.Errorf("%s %s: %s", face.name, word, got.FaceError)
				case reflect.DeepEqual(got, base):
					t.Errorf("%s %s: the value does not arrive: the face opens the project with the same as without it", face.name, word)
				}
			}
			if n < 20 {
				t.Errorf("%s: walked only %d flags", face.name, n)
			}
		})
	}
}
