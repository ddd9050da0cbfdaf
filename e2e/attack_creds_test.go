package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 66, causes 11 and 12: credentials inside the project's
// repositories, and variables the rule missed. Each test failed on
// f31c8f1: read_file, cat and git config returned the workflow's token
// and the remote's password, and `env` showed Bundler's password, a PGP
// private key, connection strings' passwords and git's configuration
// variables.

// a66Token is a remote's password, and a66Header the workflow token's
// Basic credential as actions/checkout persists it.
const a66Token = "ghp_e2eA66RemotePassword0123456789abcdef"

var (
	a66Workflow = "ghs_e2eA66WorkflowToken0123456789ABCDEF"
	a66Basic    = base64.StdEncoding.EncodeToString([]byte("x-access-token:" + a66Workflow))
)

// a66Secrets are the forms a credential of the project's configuration
// could reach the endpoint or a record in.
func a66Secrets() []string { return []string{a66Token, a66Workflow, a66Basic} }

func a66Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// a66Server is a stand-in model that answers the first request with
// calls and the one carrying their results with "done"; results returns
// each tool's result by the order of the calls.
func a66Server(t *testing.T, calls ...llmtest.ToolCall) (*llmtest.Server, func() []string) {
	var mu sync.Mutex
	var results []string
	srv := llmtest.NewServerFunc(func(r llmtest.RecordedRequest) llmtest.Response {
		msgs := r.Request.Messages
		if last := msgs[len(msgs)-1]; last.Role == "tool" {
			mu.Lock()
			results = results[:0]
			for _, m := range msgs {
				if m.Role == "tool" {
					results = append(results, m.Content)
				}
			}
			mu.Unlock()
			return llmtest.Response{Text: "done"}
		}
		return llmtest.Response{ToolCalls: calls}
	})
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), results...)
	}
}

func a66RunCall(command string) llmtest.ToolCall {
	js, _ := json.Marshal(map[string]any{"command": command})
	return llmtest.ToolCall{Name: "run_command", Arguments: string(js)}
}

func a66ReadCall(path string) llmtest.ToolCall {
	js, _ := json.Marshal(map[string]any{"path": path})
	return llmtest.ToolCall{Name: "read_file", Arguments: string(js)}
}

// TestAttack66RepositoryCredentialsStayMasked: the project's .git/config
// holds what actions/checkout leaves (an extraheader with the workflow's
// token) and a remote with a password, and a nested clone holds another.
// The model reads them with read_file, cat and git config, also through a
// link and by a transformation (rev). In the default sandbox nothing it
// is sent holds a credential, the transformation included (the commands
// read the masked copy); in the Landlock-only fallback read_file is
// masked and the results are redacted, but a command reads the real file,
// so a transformed credential gets through (documented: docs/sandbox.md).
// ralph's records hold none in either mode, and the real file is intact.
func TestAttack66RepositoryCredentialsStayMasked(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			nested := filepath.Join(proj, "vendor", "lib")
			os.MkdirAll(nested, 0o755)
			for _, args := range [][]string{
				{"-C", proj, "config", "remote.origin.url", "https://me:" + a66Token + "@github.com/o/r.git"},
				{"-C", proj, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + a66Basic},
				{"init", "-q", nested},
				{"-C", nested, "config", "remote.origin.url", "https://" + a66Token + "@example.com/lib.git"},
			} {
				if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			real := readFileT(t, filepath.Join(proj, ".git", "config"))
			srv, results := a66Server(t,
				a66ReadCall(".git/config"),
				a66ReadCall("vendor/lib/.git/config"),
				a66RunCall("cat .git/config; ln -s .git/config linked.txt"),
				a66RunCall("git config --get remote.origin.url; git config --get-all http.https://github.com/.extraheader; git -C vendor/lib config --get remote.origin.url"),
				a66RunCall("git config --get remote.origin.url | rev; git config --get-all http.https://github.com/.extraheader | rev"),
			)
			env := attackEnv(t, home, srv.URL, mode.env)
			r := ralph(t, proj, env, nil, "-y", "read the repository configuration")
			res := results()
			if r.code != 0 || len(res) != 5 {
				t.Fatalf("exit %d\n%s\n%s\n%q", r.code, r.stdout, r.stderr, res)
			}
			saw := endpointSaw(srv)
			for _, s := range a66Secrets() {
				if strings.Contains(saw, s) {
					t.Errorf("BROKEN: the endpoint received %q", s)
				}
			}
			for i, want := range []string{"url = https://me:[REDACTED]@github.com/o/r.git", "url = https://[REDACTED]@example.com/lib.git"} {
				if !strings.Contains(res[i], want) || !strings.Contains(res[0], "extraheader = AUTHORIZATION: [REDACTED]") {
					t.Errorf("read_file did not return the masked copy:\n%s", res[i])
				}
			}
			if !strings.Contains(res[3], "https://me:[REDACTED]@github.com/o/r.git") {
				t.Errorf("git config --get did not show the masked URL:\n%s", res[3])
			}
			transformed := strings.Contains(saw, a66Reverse(a66Token)) || strings.Contains(saw, a66Reverse(a66Basic))
			if mode.env == nil && transformed {
				t.Errorf("BROKEN: in the default sandbox a command read the real configuration (the reversed credential reached the endpoint):\n%s", res[4])
			}
			if mode.env != nil {
				t.Logf("the fallback binds no masked copy: a transformed credential reached the endpoint: %v (documented)", transformed)
			}
			// read_file through a link the command made is masked too.
			srv2, results2 := a66Server(t, a66ReadCall("linked.txt"))
			r = ralph(t, proj, attackEnv(t, home, srv2.URL, mode.env), nil, "-y", "read the link")
			if res2 := results2(); r.code != 0 || len(res2) != 1 || strings.Contains(res2[0], a66Token) || !strings.Contains(res2[0], "[REDACTED]") {
				t.Errorf("read_file through a link: exit %d %q", r.code, res2)
			}
			if strings.Contains(endpointSaw(srv2), a66Token) {
				t.Errorf("BROKEN: the endpoint received the token through a link")
			}
			filepath.Walk(filepath.Join(proj, ".ralph"), func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					b, _ := os.ReadFile(p)
					for _, s := range a66Secrets() {
						if strings.Contains(string(b), s) {
							t.Errorf("BROKEN: ralph's record %s holds %q", p, s)
						}
					}
				}
				return nil
			})
			if got := readFileT(t, filepath.Join(proj, ".git", "config")); got != real {
				t.Errorf(".git/config changed; ralph's git needs the real one:\n%s", got)
			}
		})
	}
}

// a66Variables are cause 12's shapes, each with a value that must never
// reach a command.
var a66Variables = map[string]string{
	"BUNDLE_GEMS__X__COM":           "bundler:e2e-a66-bundle-pass",
	"ORG_GRADLE_PROJECT_signingKey": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\ne2e-a66-pgp-armor\n-----END PGP PRIVATE KEY BLOCK-----",
	"APP_JDBC":                      "jdbc:postgresql://db/app?user=u&password=e2e-a66-jdbc-pass",
	"APP_CONN":                      "Server=db;User Id=u;Password=e2e-a66-dotnet-pass;",
	"KAFKA_CLIENT_JAAS":             `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="e2e-a66-kafka-pass";`,
	"GIT_CONFIG_PARAMETERS":         "'http.extraheader'='Authorization: basic e2e-a66-git-parameters'",
	"GIT_CONFIG_COUNT":              "1",
	"GIT_CONFIG_KEY_0":              "http.extraheader",
	"GIT_CONFIG_VALUE_0":            "e2e-a66-git-config-value",
	"DATABASE_URL":                  "postgres://u:e2e-a66-postgres-pass@h/db",
}

// TestAttack66VariablesTheRuleMissed: ralph runs with every shape of
// cause 12 in its environment; the model's `env` shows none of them,
// ordinary colon-separated values still reach it, and the one notice
// names what shell_env could pass apart from git's variables, which it
// cannot.
func TestAttack66VariablesTheRuleMissed(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			srv, results := a66Server(t, a66RunCall("env; echo listed"))
			extra := []string{"LS_COLORS=rs=0:di=01;34:ln=01;36", "A66_DIRS=/e2e/a:/e2e/b", "A66_REPO=https://github.com/o/r.git"}
			for k, v := range a66Variables {
				extra = append(extra, k+"="+v)
			}
			r := ralph(t, proj, attackEnv(t, home, srv.URL, append(extra, mode.env...)), nil, "-y", "show the environment")
			res := strings.Join(results(), "\n")
			if r.code != 0 || !strings.Contains(res, "listed") {
				t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, res)
			}
			saw := endpointSaw(srv)
			for k, v := range a66Variables {
				if k == "GIT_CONFIG_COUNT" || k == "GIT_CONFIG_KEY_0" {
					if strings.Contains(res, k+"=") {
						t.Errorf("BROKEN: %s reached the command", k)
					}
					continue
				}
				last := v[strings.LastIndexAny(v, "=:\n ")+1:]
				if strings.Contains(saw, v) || strings.Contains(res, k+"=") || strings.Contains(saw, strings.Trim(last, `";'`)) {
					t.Errorf("BROKEN: %s reached the command and the endpoint", k)
				}
			}
			for _, want := range []string{"LS_COLORS=rs=0:di=01;34:ln=01;36", "A66_DIRS=/e2e/a:/e2e/b", "A66_REPO=https://github.com/o/r.git"} {
				if !strings.Contains(res, want) {
					t.Errorf("an ordinary variable was withheld: %s\n%s", want, res)
				}
			}
			out := r.stdout + r.stderr
			if n := strings.Count(out, "commands run without"); n != 1 {
				t.Errorf("the withheld variables were named %d times:\n%s", n, out)
			}
			for _, k := range []string{"BUNDLE_GEMS__X__COM", "ORG_GRADLE_PROJECT_signingKey", "APP_JDBC", "APP_CONN", "KAFKA_CLIENT_JAAS", "DATABASE_URL"} {
				if !strings.Contains(out, k) {
					t.Errorf("the notice did not name %s:\n%s", k, out)
				}
			}
			if !strings.Contains(out, "nor do they get GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0, GIT_CONFIG_PARAMETERS, GIT_CONFIG_VALUE_0") ||
				!strings.Contains(out, "shell_env cannot pass them") {
				t.Errorf("the notice did not say git's variables apart:\n%s", out)
			}
		})
	}
}
