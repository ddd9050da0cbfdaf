package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

func TestCommandPrefixes(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string
		ok   bool
	}{
		{"go test ./...", []string{"go test"}, true},
		{"npm run build", []string{"npm run"}, true},
		{"ls -la", []string{"ls"}, true},
		{"go -C x test", []string{"go"}, true},
		{"echo $$ > cmd.pid; sleep 60", []string{"echo", "sleep"}, true},
		{"FOO=1 BAR=2 make lint && git status", []string{"make lint", "git status"}, true},
		{`echo "a;b|c" | wc -l`, []string{"echo", "wc"}, true},
		{"echo $(rm -rf /)", nil, false},
		{"echo `id`", nil, false},
		{"   ", nil, false},
	}
	for _, c := range cases {
		got, ok := CommandPrefixes(c.cmd)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("CommandPrefixes(%q) = %q, %v; want %q, %v", c.cmd, got, ok, c.want, c.ok)
		}
	}
}

func TestCommandAllowed(t *testing.T) {
	c := Config{AllowedCommands: []string{"go test", "ls", "echo"}}
	for cmd, want := range map[string]bool{
		"go test ./...":         true,
		"go test":               true,
		"go testify":            false,
		"go build":              false,
		"ls":                    true,
		"lsof":                  false,
		"ls && rm -rf x":        false,
		"echo hi; ls":           true,
		"X=1 go test -run Foo":  true,
		"echo $(curl evil.sh)":  false,
		"echo hi | sh":          false,
		"echo hi > out.txt; ls": true,
	} {
		if got := c.CommandAllowed(cmd); got != want {
			t.Errorf("CommandAllowed(%q) = %v, want %v", cmd, got, want)
		}
	}
	if (Config{}).CommandAllowed("ls") {
		t.Error("an empty allow list allowed a command")
	}
}

// TestAllowCommandPreservesBytes: every byte of the person's file survives;
// only the new item is added, in the right place.
func TestAllowCommandPreservesBytes(t *testing.T) {
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
			path := filepath.Join("/p", ProjectFile)
			if c.before != "" {
				if err := afero.WriteFile(fs, path, []byte(c.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := AllowCommand(fs, "/p", c.prefix); err != nil {
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
			if err := AllowCommand(fs, "/p", c.prefix); err != nil {
				t.Fatal(err)
			}
			again, _ := afero.ReadFile(fs, path)
			if string(again) != c.after {
				t.Fatalf("second add changed the file:\n%q", again)
			}
		})
	}
}

func TestAllowCommandRefusesBrokenFile(t *testing.T) {
	fs := afero.NewMemMapFs()
	path := filepath.Join("/p", ProjectFile)
	broken := "model = \"unterminated\n"
	_ = afero.WriteFile(fs, path, []byte(broken), 0o644)
	if err := AllowCommand(fs, "/p", "ls"); err == nil {
		t.Fatal("no error for a file that does not parse")
	}
	if got, _ := afero.ReadFile(fs, path); string(got) != broken {
		t.Fatalf("a broken file was changed: %q", got)
	}
	notArray := "allowed_commands = \"ls\"\n"
	_ = afero.WriteFile(fs, path, []byte(notArray), 0o644)
	if err := AllowCommand(fs, "/p", "ls"); err == nil || !strings.Contains(err.Error(), "slice") {
		t.Fatalf("err = %v, want a complaint about the type", err)
	}
	if got, _ := afero.ReadFile(fs, path); string(got) != notArray {
		t.Fatalf("the file was changed: %q", got)
	}
}

func TestLoadJoinsAllowedCommands(t *testing.T) {
	fs := afero.NewMemMapFs()
	_ = afero.WriteFile(fs, "/home/ralph/config.toml", []byte("allowed_commands = [\"ls\"]\n"), 0o644)
	_ = afero.WriteFile(fs, filepath.Join("/p", ProjectFile), []byte("allowed_commands = [\"go test\"]\n"), 0o644)
	c, err := Load(Sources{Fs: fs, ProjectRoot: "/p", UserConfigDir: "/home", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	// The project's approval was not made on this machine: a cloned
	// repository cannot pre-approve commands.
	if !reflect.DeepEqual(c.AllowedCommands, []string{"ls"}) || c.UntrustedCommands != 1 || c.CommandAllowed("go test ./x") {
		t.Fatalf("untrusted: AllowedCommands = %q, untrusted %d", c.AllowedCommands, c.UntrustedCommands)
	}
	if err := TrustCommand(fs, "/home", "/p", "go test"); err != nil {
		t.Fatal(err)
	}
	c, err = Load(Sources{Fs: fs, ProjectRoot: "/p", UserConfigDir: "/home", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.AllowedCommands, []string{"ls", "go test"}) || !c.CommandAllowed("go test ./x") || c.UntrustedCommands != 0 {
		t.Fatalf("AllowedCommands = %q", c.AllowedCommands)
	}
	// Trust is per project.
	c, _ = Load(Sources{Fs: fs, ProjectRoot: "/other", UserConfigDir: "/home", Getenv: func(string) string { return "" }})
	_ = afero.WriteFile(fs, filepath.Join("/other", ProjectFile), []byte("allowed_commands = [\"go test\"]\n"), 0o644)
	c, _ = Load(Sources{Fs: fs, ProjectRoot: "/other", UserConfigDir: "/home", Getenv: func(string) string { return "" }})
	if c.CommandAllowed("go test") {
		t.Fatal("an approval for /p applied to /other")
	}
}

func TestUnsandboxedIsNeverCoveredByAlways(t *testing.T) {
	cmd := UnsandboxedPrefix + "ls -la"
	if p, ok := CommandPrefixes(cmd); ok {
		t.Fatalf("CommandPrefixes(%q) = %q, true; an unsandboxed request must always be asked about", cmd, p)
	}
	for _, allowed := range [][]string{{"ls"}, {"[unsandboxed]"}, {"[unsandboxed] ls"}} {
		if PrefixesAllowed(allowed, cmd) {
			t.Errorf("allowed_commands %q let %q through", allowed, cmd)
		}
	}
}
