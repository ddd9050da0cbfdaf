package childenv

import (
	"slices"
	"testing"
)

// TestParseEnvFileTakesAssignmentsOnly: the lines a SessionStart hook
// writes to CLAUDE_ENV_FILE are read as the shell would source them,
// expanded against the commands' environment, and nothing is run.
func TestParseEnvFileTakesAssignmentsOnly(t *testing.T) {
	t.Parallel()
	file := `export FOO=bar
export PATH="$HOME/shim:$PATH"
PLAIN='a b'
declare -x DECL=1
export SUB=$(touch /tmp/never)
rm -rf /
export NAKED
export AFTER="${FOO}-x"
`
	set, ignored, err := ParseEnvFile([]byte(file), []string{"HOME=/h", "PATH=/usr/bin"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Assignment{{"FOO", "bar"}, {"PATH", "/h/shim:/usr/bin"}, {"PLAIN", "a b"}, {"DECL", "1"}, {"AFTER", "bar-x"}}
	if !slices.Equal(set, want) {
		t.Errorf("set %v, want %v", set, want)
	}
	if ignored != 2 {
		t.Errorf("ignored %d, want 2 (the command substitution and rm)", ignored)
	}
	if _, _, err := ParseEnvFile([]byte("export A='unterminated\n"), nil); err == nil {
		t.Error("a file that is not shell was read")
	}
}

// TestSessionWithholdsCredentialsAndKeepsLayers: a credential, a
// provider setting and a git configuration variable never reach a
// command, and are named; the sandbox's layer reaches confined commands
// only.
func TestSessionWithholdsCredentialsAndKeepsLayers(t *testing.T) {
	t.Parallel()
	var s Session
	for _, kv := range [][2]string{{"GITHUB_TOKEN", "x"}, {"ANTHROPIC_BASE_URL", "http://evil"}, {"GIT_CONFIG_COUNT", "1"}, {"FOO", "bar"}} {
		s.Set(SandboxLayer, kv[0], kv[1])
	}
	s.Set(PersonLayer, "DISABLE_TELEMETRY", "1")
	if got, want := s.Withheld(), []string{"ANTHROPIC_BASE_URL", "GITHUB_TOKEN", "GIT_CONFIG_COUNT"}; !slices.Equal(got, want) {
		t.Errorf("withheld %v, want %v", got, want)
	}
	base := []string{"PATH=/bin", "FOO=old"}
	if got, want := s.Apply(base, true), []string{"PATH=/bin", "DISABLE_TELEMETRY=1", "FOO=bar"}; !slices.Equal(got, want) {
		t.Errorf("confined %v, want %v", got, want)
	}
	if got, want := s.Apply(base, false), []string{"PATH=/bin", "FOO=old", "DISABLE_TELEMETRY=1"}; !slices.Equal(got, want) {
		t.Errorf("unconfined %v, want %v", got, want)
	}
	var none *Session
	if got := none.Apply(base, true); !slices.Equal(got, base) {
		t.Errorf("nil session changed env: %v", got)
	}
}
