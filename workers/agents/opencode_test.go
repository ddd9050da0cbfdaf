package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests replay the real output of opencode run --format json
// (testdata/agents/samples/opencode_*.jsonl).

func TestExternalOpenCodeWriteCompletes(t *testing.T) {
	res, events := replay(t, AgentOpenCode, "opencode_write_default")
	if !res.Completed || res.Failure(AgentOpenCode) != "" || res.Contradiction(AgentOpenCode) != "" {
		t.Fatalf("result = %+v", res)
	}
	if res.Text != "I wrote hello.txt." {
		t.Errorf("Text = %q", res.Text)
	}
	// Two steps: 7685+16 and 7753+12 tokens; the stand-in has no price, so
	// opencode's cost of 0 is no cost.
	if res.Usage.InputTokens != 7685+7753 || res.Usage.OutputTokens != 16+12 || res.CostUSD != nil {
		t.Errorf("Usage = %+v, CostUSD = %v", res.Usage, res.CostUSD)
	}
	if !hasEvent(events, "tool", "write hello.txt") || !hasEvent(events, "usage", "") {
		t.Errorf("events: %v", events)
	}
}

func TestExternalOpenCodeSayHi(t *testing.T) {
	res, events := replay(t, AgentOpenCode, "opencode_sayhi")
	if res.Completed || res.Failure(AgentOpenCode) != "" || res.Text != "hi" || !hasEvent(events, "text", "hi") {
		t.Fatalf("result = %+v, events %v", res, events)
	}
}

// The provider's error is the failure, in its own words.
func TestExternalOpenCodeAPIErrorIsTheFailure(t *testing.T) {
	res, events := replay(t, AgentOpenCode, "opencode_err400", "RALPH_TEST_EXIT", "1")
	if got := res.Failure(AgentOpenCode); got != "opencode failed: fake error 400: the model refused the request" {
		t.Fatalf("Failure = %q (%+v)", got, res)
	}
	if !hasEvent(events, "error", "fake error 400") {
		t.Errorf("no error event: %v", events)
	}
}

// A command opencode would have asked for is refused under opencode run,
// which then stops without the marker: the denial names the command.
func TestExternalOpenCodeRefusedCommandIsNamed(t *testing.T) {
	res, _ := replay(t, AgentOpenCode, "opencode_bash_ask")
	if res.Completed || len(res.Denials) != 1 || res.Denials[0].Tool != "bash" || res.Denials[0].Input != "printf hi > hello.txt" {
		t.Fatalf("result = %+v", res)
	}
	why := res.Contradiction(AgentOpenCode)
	for _, want := range []string{"opencode was not allowed to run bash (printf hi > hello.txt)", "allow printf in allowed_commands", "--agent-arg=--auto"} {
		if !strings.Contains(why, want) {
			t.Errorf("Contradiction = %q, want %q in it", why, want)
		}
	}
}

// A tool the config denies is not offered; the model's call of it is the
// "invalid" tool, and opencode prints the marker all the same.
func TestExternalOpenCodeDeniedToolIsNamed(t *testing.T) {
	res, _ := replay(t, AgentOpenCode, "opencode_bash_deny")
	if !res.Completed || len(res.Denials) != 1 {
		t.Fatalf("result = %+v", res)
	}
	if why := res.Contradiction(AgentOpenCode); !strings.HasPrefix(why, "opencode was not allowed to use bash: ") {
		t.Errorf("Contradiction = %q", why)
	}
}

func TestExternalOpenCodeFailedCommand(t *testing.T) {
	res, _ := replay(t, AgentOpenCode, "opencode_bash_failed")
	c := res.LastCommand
	if c == nil || !c.Failed || c.ExitCode == nil || *c.ExitCode != 1 || c.Command != "printf hi > hello.txt; false" {
		t.Fatalf("LastCommand = %+v", c)
	}
	if why := res.Contradiction(AgentOpenCode); !strings.HasPrefix(why, "the last command opencode ran failed with exit status 1") {
		t.Errorf("Contradiction = %q", why)
	}
}

// permissionOf is the permission Configure gives opencode.
func permissionOf(t *testing.T, a Agent, env []string) string {
	t.Helper()
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(envValue(a.setEnv(env), opencodeConfigVar)), &cfg); err != nil {
		t.Fatal(err)
	}
	return string(cfg["permission"])
}

func TestExternalOpenCodePermissionMatchesRalphsSettings(t *testing.T) {
	oc := Agent{Kind: AgentOpenCode, Command: "opencode"}
	for _, c := range []struct {
		name string
		p    Policy
		want string
	}{
		{"default: edits, and only allowed commands", Policy{Allowed: []string{"go  test"}},
			`{"bash":{"*":"ask","go test":"allow","go test *":"allow"},"edit":"allow"}`},
		{"-y in workspace-write: opencode has no sandbox", Policy{Yes: true},
			`{"bash":{"*":"ask"},"edit":"allow"}`},
		{"-y without ralph's sandbox", Policy{Sandbox: "danger-full-access", Yes: true},
			`{"bash":"allow","edit":"allow","external_directory":"allow"}`},
		{"read-only", Policy{Sandbox: "read-only", Yes: true, Allowed: []string{"make"}},
			`{"bash":"deny","edit":"deny"}`},
	} {
		a := oc.Configure(c.p, Settings{Model: "standin/m"}, []string{"--variant", "high"})
		if got := permissionOf(t, a, nil); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		if got := strings.Join(a.Args, " "); got != "--model standin/m --variant high" {
			t.Errorf("%s: Args = %q", c.name, got)
		}
	}

	// The person's own inline config keeps its keys; its permission wins.
	a := oc.Configure(Policy{Sandbox: "read-only"}, Settings{}, nil)
	env := a.setEnv([]string{"A=1", opencodeConfigVar + `={"model":"x/y"}`})
	if got := envValue(env, opencodeConfigVar); got != `{"model":"x/y","permission":{"bash":"deny","edit":"deny"}}` {
		t.Errorf("merged config = %s", got)
	}
	if got := permissionOf(t, a, []string{opencodeConfigVar + `={"permission":"allow"}`}); got != `"allow"` {
		t.Errorf("the person's permission = %s", got)
	}
}

func TestExternalOpenCodeWrites(t *testing.T) {
	oc := Agent{Kind: AgentOpenCode, Command: "opencode", Env: []string{"HOME=/nowhere"}}
	for _, c := range []struct {
		p     Policy
		extra []string
		want  string
	}{
		{Policy{}, nil, "to run only the commands of allowed_commands"},
		{Policy{Sandbox: "read-only"}, nil, "it cannot change any file"},
		{Policy{Sandbox: "danger-full-access", Yes: true}, nil, "it may edit and run any command, without a sandbox"},
		{Policy{}, []string{"--auto"}, "opencode runs with --auto"},
	} {
		if got := oc.Configure(c.p, Settings{}, c.extra).Writes(); !strings.Contains(got, c.want) {
			t.Errorf("%+v %v: Writes = %q, want %q in it", c.p, c.extra, got, c.want)
		}
	}
}

// The variables the person's opencode config names are kept; a project's
// opencode.json is not read.
func TestExternalOpenCodeKeepsItsProvidersKey(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "opencode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "opencode", "opencode.json"), []byte(`{"provider":{"p":{"options":{"apiKey":"{env:MY_PROVIDER_KEY}"}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "opencode.json"), []byte(`{"x":"{env:STOLEN_TOKEN}"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a := Agent{Kind: AgentOpenCode, Root: root}
	env := []string{"HOME=" + home, "MY_PROVIDER_KEY=k", "STOLEN_TOKEN=s", "OPENCODE_API_KEY=o", "OTHER_API_KEY=x"}
	got := strings.Join(scrubEnv(env, nil, a.keepEnv(env)), " ")
	if !strings.Contains(got, "MY_PROVIDER_KEY=k") || !strings.Contains(got, "OPENCODE_API_KEY=o") ||
		strings.Contains(got, "STOLEN_TOKEN") || strings.Contains(got, "OTHER_API_KEY") {
		t.Errorf("env = %s", got)
	}
}

// A provider's usage limit, in opencode's error event, is waited out
// rather than failed (the event's shape is that of opencode_err400).
func TestExternalOpenCodeUsageLimit(t *testing.T) {
	sample := filepath.Join(t.TempDir(), "limit.jsonl")
	line := `{"type":"error","timestamp":1,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"You've hit your usage limit. Try again at 3:45 PM.","statusCode":429,"isRetryable":false}}}` + "\n"
	if err := os.WriteFile(sample, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ := replay(t, AgentOpenCode, sample, "RALPH_TEST_EXIT", "1")
	if res.Limit == nil || res.Limit.Until.IsZero() || !strings.Contains(res.Limit.Text, "usage limit") {
		t.Fatalf("Limit = %+v", res.Limit)
	}
}
