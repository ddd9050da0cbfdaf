package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstProgram(t *testing.T) {
	for in, want := range map[string]string{
		"./agent.sh":                      "./agent.sh",
		"  ./agent.sh --fast":             "./agent.sh",
		`'./my agent.sh' x`:               "./my agent.sh",
		`"./my agent.sh"`:                 "./my agent.sh",
		`./my\ agent.sh`:                  "./my agent.sh",
		"FOO=1 BAR=2 claude -p":           "claude",
		"exec ./agent.sh":                 "./agent.sh",
		"env -i FOO=1 ./agent.sh":         "./agent.sh",
		"nohup bash agent.sh":             "bash",
		"./agent.sh; echo done":           "./agent.sh",
		`./agent.sh "$TASK"`:              "./agent.sh",
		"bash -c 'x'|tee log":             "bash",
		"~/bin/agent":                     "~/bin/agent",
		"cd sub && ./agent.sh":            "",
		"$AGENT run":                      "",
		"./agent-$VERSION":                "",
		"if true; then ./a.sh; fi":        "",
		"exec":                            "",
		"FOO=$(date) ./agent.sh":          "",
		"~someone/bin/agent":              "",
		`"unterminated`:                   "",
		"./agents/*.sh":                   "",
		"command -p ./agent.sh --verbose": "./agent.sh",
	} {
		got, ok := firstProgram(in)
		if got != want || ok != (want != "") {
			t.Errorf("firstProgram(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestExternalCheck(t *testing.T) {
	root := t.TempDir()
	bin := t.TempDir()
	for path, mode := range map[string]os.FileMode{"run.sh": 0o755, "plain.sh": 0o644, "dir/": 0o755, bin + "/fakeclaude": 0o755} {
		var err error
		dir := strings.HasSuffix(path, "/")
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if dir {
			err = os.MkdirAll(path, mode)
		} else {
			err = os.WriteFile(path, []byte("#!/bin/sh\n"), mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	for _, c := range []struct {
		spec, command, want string
	}{
		{"exec:./run.sh --x", "", ""},
		{"exec:" + filepath.Join(root, "run.sh"), "", ""},
		{"exec:bash ./plain.sh", "", ""},
		{"exec:cd sub && ./whatever", "", ""},
		{"exec:./missing.sh", "", "--agent exec: runs " + filepath.Join(root, "missing.sh") + ", which does not exist"},
		{"exec:./plain.sh", "", "which is not executable"},
		{"exec:./dir", "", "which is not executable"},
		{"exec:no-such-agent-xyz --fast", "", `--agent exec: runs "no-such-agent-xyz", which is not a command on PATH`},
		{"claude", "fakeclaude", ""},
		{"claude", "no-such-claude-xyz", "--agent claude needs the no-such-claude-xyz command, which is not on PATH"},
		{"codex", "no-such-codex-xyz", "--agent codex needs the no-such-codex-xyz command"},
	} {
		a, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if c.command != "" {
			a.Command = c.command
		}
		err = a.Check(root)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.spec, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want %q", c.spec, err, c.want)
		}
	}
	// Without the root a relative path cannot be checked and passes.
	a, _ := Parse("exec:./missing.sh")
	if err := a.Check(""); err != nil {
		t.Errorf("Check without a root: %v", err)
	}
}
