package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trackerChoice.plan decides where ralph run takes its tasks from: a plan
// file named, the Beads plan --tracker and --epic name, or the tracker of
// the project's config when --tracker is not given; the combinations
// that contradict each other are one sentence each.
func TestTrackerPlan(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no tracker of the person's
	t.Setenv("HOME", t.TempDir())
	files, beads := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(beads, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(beads, ".ralph", "config.toml"), []byte("tracker = \"beads\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		root      string
		choice    trackerChoice
		changed   []string
		planArg   string
		want, err string
	}{
		{"the default: the files", files, trackerChoice{}, nil, "", "", ""},
		{"a plan file", files, trackerChoice{}, nil, "p.md", "p.md", ""},
		{"--tracker files", beads, trackerChoice{Tracker: "files"}, []string{"tracker"}, "", "", ""},
		{"--epic without Beads", files, trackerChoice{Epic: "bd-1"}, []string{"epic"}, "", "", "--epic names a Beads epic"},
		{"a tracker unknown", files, trackerChoice{Tracker: "jira"}, []string{"tracker"}, "", "", `--tracker must be files or beads, not "jira"`},
		{"--tracker beads", files, trackerChoice{Tracker: "beads"}, []string{"tracker"}, "", "beads", ""},
		{"--tracker beads --epic", files, trackerChoice{Tracker: "beads", Epic: "bd-7"}, []string{"tracker", "epic"}, "", "beads:bd-7", ""},
		{"an epic that is no id", files, trackerChoice{Tracker: "beads", Epic: "my epic"}, []string{"tracker", "epic"}, "", "", "is not a Beads issue id"},
		{"a Beads plan named", files, trackerChoice{Tracker: "beads"}, []string{"tracker"}, "beads:bd-2", "beads:bd-2", ""},
		{"a plan file and --tracker beads", files, trackerChoice{Tracker: "beads"}, []string{"tracker"}, "p.md", "", "not both"},
		{"the config's Beads", beads, trackerChoice{}, nil, "", "beads", ""},
		{"a plan file over the config's Beads", beads, trackerChoice{}, nil, "p.md", "p.md", ""},
	} {
		got, err := tc.choice.plan(tc.root, tc.planArg, givenFlags(tc.changed...))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: (%q, %v), want the error %q", tc.name, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: (%q, %v), want %q", tc.name, got, err, tc.want)
		}
	}
}
