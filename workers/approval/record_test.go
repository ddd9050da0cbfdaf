package approval

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/ralph-dev/ralph/memory/config"
)

// TestSaveRulePreservesBytes: every byte of the person's file survives;
// only the new item is added, in the right place.
func TestSaveRulePreservesBytes(t *testing.T) {
	cases := []struct {
		name, before, prefix, after string
	}{
		{"no file", "", "go test", "allowed_commands = [\"go test\"]\n"},
		{"keys only, no final newline", "model = \"m\" # mine", "ls",
			"model = \"m\" # mine\nallowed_commands = [\"ls\"]\n"},
		{"before the first table", "# top\nmodel = \"x\"\n\n[extra]\nallowed_commands = 1\n", "ls",
			"# top\nmodel = \"x\"\n\nallowed_commands = [\"ls\"]\n\n[extra]\nallowed_commands = 1\n"},
		{"existing one-line array", "model = \"x\"\nallowed_commands = [\"ls\"]  # keep\nmax_turns = 3\n", "go test",
			"model = \"x\"\nallowed_commands = [\"ls\", \"go test\"]  # keep\nmax_turns = 3\n"},
		{"existing empty array", "allowed_commands = []\n", "ls", "allowed_commands = [\"ls\"]\n"},
		{"multi-line array with trailing comma and comments", "allowed_commands = [\n  \"ls\", # list\n  'echo',\n]\n[t]\n", "make lint",
			"allowed_commands = [\n  \"ls\", # list\n  'echo', \"make lint\"\n]\n[t]\n"},
		{"brackets in strings do not fool it", "model = \"[not a table]\"\nbase_url = '''\n[x]\n'''\n", "ls",
			"model = \"[not a table]\"\nbase_url = '''\n[x]\n'''\nallowed_commands = [\"ls\"]\n"},
		{"CRLF file", "model = \"x\"\r\n", "ls", "model = \"x\"\r\nallowed_commands = [\"ls\"]\r\n"},
		{"quotes are escaped", "", `say "hi"`, "allowed_commands = [\"say \\\"hi\\\"\"]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := afero.NewMemMapFs()
			path := filepath.Join("/p", config.ProjectFile)
			if c.before != "" {
				if err := afero.WriteFile(fs, path, []byte(c.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := saveRule(fs, fs, "/p", "/home", c.prefix); err != nil {
				t.Fatal(err)
			}
			got, _ := afero.ReadFile(fs, path)
			if string(got) != c.after {
				t.Fatalf("file is\n%q\nwant\n%q", got, c.after)
			}
			if c.before != "" {
				if fi, _ := fs.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Fatalf("mode changed to %v", fi.Mode())
				}
			}
			// Adding it again changes nothing.
			if err := saveRule(fs, fs, "/p", "/home", c.prefix); err != nil {
				t.Fatal(err)
			}
			again, _ := afero.ReadFile(fs, path)
			if string(again) != c.after {
				t.Fatalf("second add changed the file:\n%q", again)
			}
		})
	}
}

func TestSaveRuleRefusesBrokenFile(t *testing.T) {
	fs := afero.NewMemMapFs()
	path := filepath.Join("/p", config.ProjectFile)
	broken := "model = \"unterminated\n"
	_ = afero.WriteFile(fs, path, []byte(broken), 0o644)
	if err := saveRule(fs, fs, "/p", "/home", "ls"); err == nil {
		t.Fatal("no error for a file that does not parse")
	}
	if got, _ := afero.ReadFile(fs, path); string(got) != broken {
		t.Fatalf("a broken file was changed: %q", got)
	}
	notArray := "allowed_commands = \"ls\"\n"
	_ = afero.WriteFile(fs, path, []byte(notArray), 0o644)
	if err := saveRule(fs, fs, "/p", "/home", "ls"); err == nil || !strings.Contains(err.Error(), "slice") {
		t.Fatalf("err = %v, want a complaint about the type", err)
	}
	if got, _ := afero.ReadFile(fs, path); string(got) != notArray {
		t.Fatalf("the file was changed: %q", got)
	}
}
