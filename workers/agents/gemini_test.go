package agents

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The samples are Gemini CLI 0.61.0's own stream-json, recorded against
// the stand-in model (see testdata/agents/samples/README.md).

func TestExternalGeminiParseAndCommandLine(t *testing.T) {
	a, err := Parse(" Gemini ")
	if err != nil || a.Kind != AgentGemini || a.Command != "gemini" {
		t.Fatalf("Parse = %+v, %v", a, err)
	}
	a.Args = []string{"--skip-trust"}
	name, args, err := a.commandLine()
	if err != nil || name != "gemini" || strings.Join(args, " ") != "-p  --output-format stream-json --skip-trust" {
		t.Fatalf("commandLine = %s %q, %v", name, args, err)
	}
}

func TestExternalGeminiWriteAutoEdit(t *testing.T) {
	res, events := replay(t, AgentGemini, "gemini_write_auto_edit")
	if !res.Completed || res.Failure(AgentGemini) != "" || res.Contradiction(AgentGemini) != "" {
		t.Fatalf("result = %+v", res)
	}
	if res.Text != "I wrote hello.txt." || res.Usage.InputTokens != 19453 || res.Usage.OutputTokens != 29 || res.CostUSD != nil {
		t.Fatalf("Text = %q, Usage = %+v, CostUSD = %v", res.Text, res.Usage, res.CostUSD)
	}
	if !hasEvent(events, "tool", "write_file") || !hasEvent(events, "text", "I wrote") {
		t.Fatalf("events: %v", events)
	}
}

func TestExternalGeminiSayHiDoesNotComplete(t *testing.T) {
	res, _ := replay(t, AgentGemini, "gemini_sayhi")
	if res.Completed || res.Failure(AgentGemini) != "" || res.Text != "hi" {
		t.Fatalf("result = %+v", res)
	}
}

// In its default approval mode gemini offers no edit tool; the call comes
// back "tool_not_registered" and gemini still prints the marker.
func TestExternalGeminiRefusedWriteContradicts(t *testing.T) {
	res, _ := replay(t, AgentGemini, "gemini_write_default")
	if !res.Completed || res.Failure(AgentGemini) != "" {
		t.Fatalf("the sample prints the marker and exits 0: %+v", res)
	}
	if len(res.Denials) != 1 || res.Denials[0].Tool != "write_file" || res.Denials[0].Input != "hello.txt" {
		t.Fatalf("Denials = %+v", res.Denials)
	}
	if why := res.Contradiction(AgentGemini); !strings.Contains(why, "gemini was not allowed to use write_file on hello.txt") ||
		!strings.Contains(why, "--approval-mode auto_edit") {
		t.Errorf("Contradiction = %q", why)
	}
}

func TestExternalGeminiShell(t *testing.T) {
	res, _ := replay(t, AgentGemini, "gemini_shell_refused")
	why := res.Contradiction(AgentGemini)
	for _, want := range []string{"gemini was not allowed to run a shell command (echo hi > hello.txt)", `"run_shell_command(echo)"`, "allowed_commands"} {
		if !strings.Contains(why, want) {
			t.Errorf("Contradiction = %q, want %q in it", why, want)
		}
	}
	res, _ = replay(t, AgentGemini, "gemini_shell_allowed")
	if c := res.LastCommand; c == nil || c.Failed || c.Command != "echo hi > hello.txt" || res.Contradiction(AgentGemini) != "" {
		t.Fatalf("LastCommand = %+v, Denials = %+v", c, res.Denials)
	}
}

// An API error is the error result in gemini's words; gemini exits with
// the HTTP status modulo 256.
func TestExternalGeminiAPIErrorIsTheFailure(t *testing.T) {
	res, events := replay(t, AgentGemini, "gemini_err400", "RALPH_TEST_EXIT", "144")
	if res.Completed || res.ExitCode != 144 {
		t.Fatalf("result = %+v", res)
	}
	if got := res.Failure(AgentGemini); !strings.HasPrefix(got, "gemini failed: [API Error: ") || !strings.Contains(got, "API key not valid") {
		t.Fatalf("Failure = %q", got)
	}
	if !hasEvent(events, "error", "API key not valid") || res.Limit != nil {
		t.Fatalf("events %v, limit %+v", events, res.Limit)
	}
}

// A daily quota is a usage limit until midnight Pacific time.
func TestExternalGeminiDailyQuotaIsALimit(t *testing.T) {
	res, _ := replay(t, AgentGemini, "gemini_quota", "RALPH_TEST_EXIT", "173")
	if res.Limit == nil || !strings.Contains(res.Limit.Text, "exhausted your daily quota") {
		t.Fatalf("Limit = %+v", res.Limit)
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	if u := res.Limit.Until.In(la); u.Hour() != 0 || u.Minute() != 0 || time.Until(u) <= 0 || time.Until(u) > 25*time.Hour {
		t.Fatalf("Until = %v", u)
	}
}

func TestExternalGeminiConfigure(t *testing.T) {
	gemini := Agent{Kind: AgentGemini, Command: "gemini"}
	rules := []string{"go test", "make"}
	for _, c := range []struct {
		name  string
		p     Policy
		s     Settings
		extra []string
		want  string
	}{
		{"default: edits, ralph's commands", Policy{Allowed: rules}, Settings{}, nil,
			"--skip-trust --approval-mode auto_edit --allowed-tools run_shell_command(go test) run_shell_command(make)"},
		{"-y in workspace-write: still no other command", Policy{Yes: true}, Settings{Model: "gemini-2.5-pro"}, nil,
			"--skip-trust --approval-mode auto_edit --model gemini-2.5-pro"},
		{"-y without ralph's sandbox: yolo", Policy{Sandbox: "danger-full-access", Yes: true, Allowed: rules}, Settings{}, nil,
			"--skip-trust --approval-mode yolo"},
		{"read-only: nothing", Policy{Sandbox: "read-only", Yes: true, Allowed: rules}, Settings{}, nil,
			"--skip-trust --approval-mode default"},
		{"the person's mode wins", Policy{}, Settings{}, []string{"--yolo", "-m", "x"},
			"--skip-trust --yolo -m x"},
	} {
		got := gemini.Configure(c.p, c.s, c.extra)
		if s := strings.Join(got.Args, " "); s != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, s, c.want)
		}
		if w := got.Writes(); !strings.HasPrefix(w, "gemini runs with") {
			t.Errorf("%s: Writes = %q", c.name, w)
		}
	}
	for args, want := range map[string]string{
		"--approval-mode auto_edit":                      "run no shell command",
		"--approval-mode auto_edit --allowed-tools x(y)": "the commands of --allowed-tools",
		"--approval-mode default":                        "may change no file",
		"--yolo":                                         "without a sandbox",
		"":                                               "approval mode of its own settings",
	} {
		if got := (Agent{Kind: AgentGemini, Args: strings.Fields(args)}).Writes(); !strings.Contains(got, want) {
			t.Errorf("%s: Writes = %q, want %q in it", args, got, want)
		}
	}
}

// gemini gets its own key and base URL, not other credentials.
func TestExternalGeminiEnv(t *testing.T) {
	env := testEnv("GEMINI_API_KEY", "g-secret", "GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1", "OTHER_API_KEY", "other", "RALPH_LLM_AUTH", "ralph-secret")
	a := Agent{Kind: AgentGemini, Command: fakeAgent(t, "env_dump.sh"), Env: env, DropEnv: []string{"RALPH_LLM_AUTH"}}
	res, _, err := runAgent(t, context.Background(), a, "")
	if err != nil {
		t.Fatal(err)
	}
	out := "\n" + res.Text + "\n"
	if !strings.Contains(out, "\nGEMINI_API_KEY=g-secret\n") || !strings.Contains(out, "\nGOOGLE_GEMINI_BASE_URL=") ||
		strings.Contains(out, "OTHER_API_KEY") || strings.Contains(out, "RALPH_LLM_AUTH") {
		t.Fatalf("gemini environment:%s", out)
	}
}

// TestGeminiNotStartedBesideProjectSettings: gemini cannot be told to
// leave the project's .gemini/settings.json out, so Check refuses it in a
// project that holds one, and a project without it is fine.
func TestGeminiNotStartedBesideProjectSettings(t *testing.T) {
	root := t.TempDir()
	if err := checkProjectSettings(AgentGemini, root); err != nil {
		t.Fatalf("a project without gemini's settings: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".gemini", "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := checkProjectSettings(AgentGemini, root)
	if !errors.Is(err, ErrProjectSettings) || !strings.Contains(err.Error(), ".gemini/settings.json") {
		t.Fatalf("beside .gemini/settings.json: %v", err)
	}
	if err := checkProjectSettings(AgentClaude, root); err != nil {
		t.Fatalf("claude is told to leave the project's settings out: %v", err)
	}
}
