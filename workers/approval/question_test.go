package approval

import (
	"strings"
	"testing"
)

// spoof is the command from issue 9: on a terminal it looked like
// "run `ls -la`? (always allows `ls`)" while it touched a file outside the
// project.
const spoof = "touch ../outside/SPOOF2 \r\x1b[2K\x1b[8m\x1b]0;x\x07run `ls -la`? (always allows `ls`)"

func TestQuestionShowsTheTruth(t *testing.T) {
	p, _ := newPolicy(t, Options{})
	q := p.Question(spoof)
	txt := q.Text()
	for _, want := range []string{"touch ../outside/SPOOF2", `\r^[[2K^[[8m^[]0;x^G`, "[y]es / [n]o / [t]ell it why not\n", "asked every time, no [a]lways", "control character"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the question does not show %q:\n%s", want, txt)
		}
	}
	if strings.ContainsAny(txt, "\x1b\r\x07") {
		t.Fatalf("the question holds raw control characters: %q", txt)
	}
	if q.CanAlways() {
		t.Fatal("always offered for the spoof")
	}
}

func TestQuestionText(t *testing.T) {
	p, _ := newPolicy(t, Options{UserRules: []string{"go test"}})
	q := p.Question("go test ./... && go vet ./... | tee vet.log")
	if got := q.Remember; strings.Join(got, ",") != "go vet,tee" {
		t.Fatalf("Remember = %q", got)
	}
	first, rest, _ := strings.Cut(q.Text(), "\n")
	if first != "run `go test ./... && go vet ./... | tee vet.log`? [y]es / [n]o / [t]ell it why not / [a]lways / [p]roject always" {
		t.Fatalf("first line %q", first)
	}
	if rest != "  [a]lways remembers `go vet`, `tee` in your config, [p] in the project's (? explains)" {
		t.Fatalf("what always remembers is not said in one line:\n%s", rest)
	}
	if help := q.Help(); !strings.Contains(help, "[a]lways remembers `go vet`, `tee` in your config, for every project; [p]roject always in this project's .ralph/config.toml") || !strings.Contains(help, "inside the project") {
		t.Fatalf("? does not say what always allows:\n%s", help)
	}
	if q.AllKeys() != "yntap?" {
		t.Fatalf("AllKeys = %q", q.AllKeys())
	}
	if q.Prompt() != "allow? y/n/t/a/p ›" {
		t.Fatalf("prompt %q", q.Prompt())
	}

	long := "cat <<'EOF' > x.txt\nline one\nline two\n" + strings.Repeat("long ", 60) + "\nEOF"
	txt := p.Question(long).Text()
	if !strings.HasPrefix(txt, "run this command (5 lines)? [y]es / [n]o / [t]ell it why not / [a]lways / [p]roject always\n") {
		t.Fatalf("multi-line question:\n%s", txt)
	}
	for _, l := range strings.Split(long, "\n") {
		if !strings.Contains(txt, "  │ "+l+"\n") {
			t.Fatalf("line %q is not shown whole:\n%s", l, txt)
		}
	}
}

func TestQuestionParse(t *testing.T) {
	always := Question{Command: "ls", Remember: []string{"ls"}}
	never := Question{Command: "ls > /x", Why: []string{"x"}}
	for in, want := range map[string]Answer{"y": Yes, " YES\n": Yes, "n": No, "no": No, "a": Always, "Always": Always, "p": Share,
		"t": TellWhy, "n: use make": NoBecause("use make"), "no, not now": NoBecause("not now"), "t  try  again": NoBecause("try again")} {
		if got, ok := always.Parse(in); !ok || got != want {
			t.Errorf("Parse(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "maybe", "ya", "y please"} {
		if _, ok := always.Parse(in); ok {
			t.Errorf("Parse(%q) was taken as an answer", in)
		}
	}
	if _, ok := never.Parse("a"); ok || never.Choices() != "[y]es / [n]o / [t]ell it why not" || strings.Contains(never.Retry(), "always") {
		t.Fatal("always accepted where it is not offered")
	}
}
