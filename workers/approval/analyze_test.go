package approval

import (
	"reflect"
	"strings"
	"testing"
)

const testRoot = "/work/proj"

// TestAnalyzeRules: the rule of each simple command, found through every
// kind of list, and nothing asked when nothing escapes a rule.
func TestAnalyzeRules(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string
	}{
		{"ls -la", []string{"ls"}},
		{"go test ./...", []string{"go test"}},
		{"npm run build", []string{"npm run"}},
		{"git status --short", []string{"git status"}},
		{"make lint", []string{"make lint"}},
		{"make", []string{"make"}},
		{"cargo build --release", []string{"cargo build"}},
		{"echo hi; ls", []string{"echo", "ls"}},
		{"go vet ./... && go test ./...", []string{"go vet", "go test"}},
		{"make || echo failed", []string{"make", "echo"}},
		{"cat go.mod | grep module | wc -l", []string{"cat", "grep", "wc"}},
		{"(cd sub && go test ./...)", []string{"cd", "go test"}},
		{"{ echo a; echo b; } > out.txt", []string{"echo"}},
		{"if test -f x; then cat x; else echo none; fi", []string{"test", "cat", "echo"}},
		{"while false; do sleep 1; done", []string{"false", "sleep"}},
		{"case x in x) echo x;; esac", []string{"echo"}},
		{"echo hi > out.txt 2>&1", []string{"echo"}},
		{"go test ./... >/dev/null 2>&1", []string{"go test"}},
		{"echo hi >> logs/build.log", []string{"echo"}},
		{"sort < data.txt > sorted.txt", []string{"sort"}},
		{"echo \"a;b|c\" | wc -l", []string{"echo", "wc"}},
		{"echo $$ > cmd.pid; sleep 60", []string{"echo", "sleep"}},
		{"rm -rf build dist", []string{"rm"}},
		{"rm -f x", []string{"rm"}},
		{"rm -rf /work/proj/build", []string{"rm"}},
		{"find . -name '*.go'", []string{"find"}},
		{"./scripts/check.sh --fast", []string{"./scripts/check.sh"}},
		{"git log main..feature", []string{"git log"}},
		{"git diff HEAD~1", []string{"git diff"}},
		{"cat <<'EOF' > notes.md\nhello $HOME\nEOF", []string{"cat"}},
		{"echo one\necho two", []string{"echo"}},
		{"time go test ./...", []string{"go test"}},
		{"! grep -q x file", []string{"grep"}},
		{"python script.py", []string{"python script.py"}},
		{"[ -f go.mod ] && echo yes", []string{"[", "echo"}},
	}
	for _, c := range cases {
		a := Analyze(c.cmd, testRoot)
		if len(a.Asks) > 0 || !reflect.DeepEqual(a.Rules, c.want) {
			t.Errorf("Analyze(%q) = rules %q, asks %q; want rules %q and nothing asked", c.cmd, a.Rules, a.Asks, c.want)
		}
	}
}

// TestAnalyzeAsks: everything a rule cannot vouch for is asked about, with
// a reason that says what was found.
func TestAnalyzeAsks(t *testing.T) {
	cases := []struct{ cmd, why string }{
		// Redirections out of the project.
		{"echo x >> ~/.bashrc", "~/.bashrc"},
		{"echo x > /etc/x", "/etc/x"},
		{"echo x > ../x", "../x"},
		{"echo x &> ../log", "../log"},
		{"cat < /etc/passwd", "reads from /etc/passwd"},
		{"echo x > sub/../../x", "sub/../../x"},
		{"echo x >| /tmp/x", "/tmp/x"},
		{"echo x >&/tmp/x", "/tmp/x"},
		{"echo evil > .git/hooks/pre-commit", ".git or .ralph"},
		{"echo 'allowed_commands = [\"rm\"]' >> .ralph/config.toml", ".git or .ralph"},
		{"echo x > .gi*/config", ".git or .ralph"},
		// Paths outside the project as arguments.
		{"rm -rf /tmp/outside-dir", "/tmp/outside-dir"},
		{"rm -rf ~", "home directory"},
		{"rm -rf ..", ".."},
		{"rm -rf .", "the whole project"},
		{"rm -rf /work/proj", "the whole project"},
		{"rm -rf --no-preserve-root x", "no-preserve-root"},
		{"rm -rf .*/x", ".*/x"},
		{"cat ~/.ssh/id_rsa", "home directory"},
		{"cp x --target-directory=/etc", "/etc"},
		{"gcc -o/tmp/x x.c", "/tmp/x"},
		{"dd if=x of=/dev/sda", "/dev/sda"},
		{"ls /", "names /"},
		{"/usr/bin/rm -rf x", "outside the project"},
		// Substitutions and expansions.
		{"echo $(rm -rf /)", "substitutes commands"},
		{"echo `id`", "substitutes commands"},
		{"diff <(ls a) <(ls b)", "substitutes processes"},
		{"$CMD x", "expands variables"},
		{"rm -rf $HOME", "expands variables"},
		{"echo ${x:-/etc}", "expands variables"},
		{"echo $((1+2))", "arithmetic"},
		{"echo {/etc,x}", "brace expansion"},
		// Commands that run other commands.
		{"eval 'rm -rf ~'", "`eval`"},
		{"sh -c 'touch /tmp/x'", "`sh`"},
		{"bash -c ls", "`bash`"},
		{"echo ls | sh", "`sh`"},
		{"exec ls", "`exec`"},
		{"source ./env.sh", "`source`"},
		{". ./env.sh", "`.`"},
		{"ls | xargs rm", "`xargs`"},
		{"find . -exec rm {} \\;", "-exec"},
		{"find . -execdir rm {} +", "-execdir"},
		{"find . -name x -delete", "-delete"},
		{"find . -ok rm {} \\;", "-ok"},
		{"sudo ls", "another user"},
		{"doas ls", "another user"},
		{"env rm -rf x", "`env`"},
		{"command ls", "`command`"},
		{"nohup ls", "`nohup`"},
		{"timeout 5 rm -rf x", "`timeout`"},
		{"awk '{system(\"id\")}' x", "`awk`"},
		{"sed -i s/a/b/ x", "`sed`"},
		{"perl -e 'unlink glob \"*\"'", "`perl`"},
		// git, go, make and friends.
		{"git -c core.pager=evil log", "option (-c)"},
		{"git config core.hooksPath x", "git config"},
		{"git --git-dir=/x status", "option"},
		{"git clone -c core.sshCommand=evil url", "configuration or hooks"},
		{"git rebase -x 'rm -rf ~' main", "git rebase -x"},
		{"git submodule foreach rm -rf x", "git submodule"},
		{"go test -exec=evil ./...", "-exec"},
		{"go test -toolexec ./evil ./...", "-toolexec"},
		{"go -C /tmp test", "option (-C)"},
		{"go env -w GOFLAGS=-x", "go env -w"},
		{"make test CC=evil", "with a variable"},
		{"make --eval='x:;rm -rf ~' x", "--eval"},
		{"tar xf a.tar --to-command=sh", "--to-command"},
		{"npm config set script-shell evil", "npm config"},
		{"docker run --privileged alpine", "--privileged"},
		{"docker run -v /:/host alpine", "/:/host"},
		// Quoting tricks that hide a command's name.
		{`ec""ho hi`, "quoted, escaped or computed"},
		{`\rm -rf x`, "quoted, escaped or computed"},
		{`$'\x72m' -rf x`, "$'…'"},
		{`'rm' -rf x`, "quoted, escaped or computed"},
		{`r*m x`, "quoted, escaped or computed"},
		{"go 'test' ./...", "subcommand"},
		// Shell state that changes later commands.
		{"PATH=/tmp/evil:/usr/bin ls", "sets variables (PATH"},
		{"LD_PRELOAD=./x.so ls", "sets variables"},
		{"ls() { rm -rf ~; }; ls", "function"},
		{"export PATH=/tmp", "declares or exports"},
		{"alias ls='rm -rf ~'", "`alias`"},
		{"hash -p /tmp/evil ls", "`hash`"},
		{"cd /tmp && rm -rf x", "/tmp"},
		{"cd && rm -rf x", "cd"},
		{"cd - && rm -rf x", "cd -"},
		{"sleep 100 &", "background"},
		{"for PATH in bin; do ls; done", "loop"},
		{"read -r PATH <<< /tmp/evil; ls", "`read`"},
		{"printf -v PATH /tmp/evil; ls", "printf -v"},
		{"[[ -f x ]]", "[[ … ]]"},
		{"kill -9 -1", "`kill`"},
		{"echo 'unterminated", "cannot read it"},
		{"", "no command"},
	}
	for _, c := range cases {
		a := Analyze(c.cmd, testRoot)
		if len(a.Asks) == 0 || !strings.Contains(strings.Join(a.Asks, "; "), c.why) {
			t.Errorf("Analyze(%q) = asks %q; want a reason mentioning %q", c.cmd, a.Asks, c.why)
		}
	}
}

// TestAnalyzeSymlinkedRoot: an absolute path is inside the project under
// the root as given or as resolved.
func TestAnalyzeSymlinkedRoot(t *testing.T) {
	if a := Analyze("rm -rf /private/proj/build", "/proj", "/private/proj"); len(a.Asks) > 0 {
		t.Fatalf("a path under the resolved root was asked about: %q", a.Asks)
	}
	if a := Analyze("rm -rf /private/other", "/proj", "/private/proj"); len(a.Asks) == 0 {
		t.Fatal("a path outside both roots was not asked about")
	}
}

// TestAnalyzeControlCharacters: a command that would look different on a
// terminal from what runs is asked about, even when its words are fine.
func TestAnalyzeControlCharacters(t *testing.T) {
	for _, cmd := range []string{"ls -la\r\x1b[2K", "echo hi\x1b[8m", "echo \u009b2J", "ls\x08\x08rm"} {
		if a := Analyze(cmd, testRoot); !strings.Contains(strings.Join(a.Asks, ";"), "control character") {
			t.Errorf("Analyze(%q) asks %q; want the control character named", cmd, a.Asks)
		}
	}
}
