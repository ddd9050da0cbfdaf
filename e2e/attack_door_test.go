package e2e

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// Issue 88, cause 2: everything that enters a request goes through one
// door. On 6f9943f an instructions file's @ import, a project command's
// @ file and a model-written CLAUDE.md read in the next session put the
// workflow's token and a remote's password into the request, raw, while
// read_file showed them masked; with --allow-home-project a ~/CLAUDE.md
// importing @.ssh/id_rsa and @.aws/credentials sent the person's keys,
// which read_file refuses as kept. Each test failed there; each payload
// is whether a secret reached the stand-in model's request log.

const (
	a88Token    = "ghp_e2eA88RemotePassword0123456789abcdef"
	a88Included = "ghs_e2eA88IncludedToken0123456789ABCDEF"
	a88AWS      = "E2E-A88-aws-secret-access-key-of-the-person"
)

var (
	a88Workflow = "ghs_e2eA88WorkflowToken0123456789ABCDEF"
	a88Basic    = base64.StdEncoding.EncodeToString([]byte("x-access-token:" + a88Workflow))
)

// a88Secrets are the forms a credential of the project's configuration
// could reach the endpoint in.
func a88Secrets() []string { return []string{a88Token, a88Workflow, a88Basic, a88Included} }

// a88Creds gives proj's repository what actions/checkout leaves (an
// extraheader holding the workflow's token), a remote with a password,
// and an included file (ci.conf, in the project) holding another token.
func a88Creds(t *testing.T, proj string) {
	t.Helper()
	mustWrite(t, filepath.Join(proj, "ci.conf"), "[http]\n\textraheader = AUTHORIZATION: bearer "+a88Included+"\n")
	for _, args := range [][]string{
		{"-C", proj, "config", "remote.origin.url", "https://me:" + a88Token + "@github.com/o/r.git"},
		{"-C", proj, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic " + a88Basic},
		{"-C", proj, "config", "include.path", "../ci.conf"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// a88NoSecret fails the test when the endpoint received a credential.
func a88NoSecret(t *testing.T, srv *llmtest.Server, secrets ...string) {
	t.Helper()
	saw := endpointSaw(srv)
	for _, s := range secrets {
		if strings.Contains(saw, s) {
			t.Errorf("BROKEN: the endpoint received %q", s)
		}
	}
}

// a88First is the first request's system prompt and its last message.
func a88First(t *testing.T, srv *llmtest.Server) (system, last string) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 || len(reqs[0].Request.Messages) == 0 {
		t.Fatalf("the endpoint got no request")
	}
	msgs := reqs[0].Request.Messages
	if msgs[0].Role == "system" {
		system = msgs[0].Content
	}
	return system, msgs[len(msgs)-1].Content
}

// TestAttack88ImportsSendNoCredential: CLAUDE.md imports .git/config,
// a link to it by another name, and a file the configuration includes.
// The token never reaches the endpoint: the imports from .git are
// refused in one sentence the prompt holds (the link too, being the same
// file), and the included file is imported masked, with the sentence
// that says which file was masked.
func TestAttack88ImportsSendNoCredential(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			a88Creds(t, proj)
			if err := os.Symlink(".git/config", filepath.Join(proj, "gitconf")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(proj, "CLAUDE.md"), "# Rules\nThe remote: @.git/config\nThe same: @gitconf\nCI: @ci.conf\n")
			srv, _ := a59Server(t)
			r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "hello")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			a88NoSecret(t, srv, a88Secrets()...)
			system, _ := a88First(t, srv)
			for _, want := range []string{
				"(@.git/config, imported by CLAUDE.md, was left out: ralph imports nothing from a repository's .git directory",
				"(@gitconf, imported by CLAUDE.md, was left out: ralph imports nothing from a repository's .git directory",
				"extraheader = AUTHORIZATION: [REDACTED]",
				"[ralph masked the credentials in ci.conf as [REDACTED]",
			} {
				if !strings.Contains(system, want) {
					t.Errorf("the system prompt does not say %q:\n%s", want, system)
				}
			}
			if !strings.Contains(r.stderr, "CLAUDE.md imports @.git/config, which was left out of the prompt: ralph imports nothing from a repository's .git directory") {
				t.Errorf("the person was not told of the refused import:\n%s", r.stderr)
			}
		})
	}
}

// TestAttack88ModelWrittenInstructionsNextSession: the model's command
// writes a CLAUDE.md importing .git/config and a link to it; the next
// session's first request holds no credential.
func TestAttack88ModelWrittenInstructionsNextSession(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			a88Creds(t, proj)
			srv, log := a59Server(t, a59Cmd("printf 'See @.git/config and @notes.md and @AGENTS.md\\n' > CLAUDE.md && ln -s .git/config notes.md && ln -s .git/config AGENTS.md && echo written"))
			r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "-y", "set up")
			if _, results := log(); r.code != 0 || !strings.Contains(results, "written") {
				t.Fatalf("the model's command did not run: exit %d\n%s\n%s", r.code, results, r.stderr)
			}
			next, _ := a59Server(t)
			r = ralph(t, proj, attackEnv(t, home, next.URL, mode.env), nil, "hello")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			a88NoSecret(t, next, a88Secrets()...)
			a88NoSecret(t, srv, a88Secrets()...)
			system, _ := a88First(t, next)
			if !strings.Contains(system, "(@notes.md, imported by CLAUDE.md, was left out") {
				t.Errorf("the link's import is not said to be left out:\n%s", system)
			}
			// AGENTS.md itself a link to .git/config: read masked, and said.
			if !strings.Contains(system, "[ralph masked the credentials in AGENTS.md as [REDACTED]") {
				t.Errorf("the linked AGENTS.md is not said to be masked:\n%s", system)
			}
		})
	}
}

// TestAttack88ProjectCommandEmbedsMasked: a project's custom command
// attaches @.git/config and a link to it; the message holds the masked
// copy, with its structure, and the sentence naming the masked file.
func TestAttack88ProjectCommandEmbedsMasked(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			a88Creds(t, proj)
			if err := os.Symlink(".git/config", filepath.Join(proj, "gitconf")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(proj, ".claude", "commands", "cfg.md"), "---\ndescription: show the config\n---\nCheck the remote in @.git/config and @gitconf\n")
			srv, _ := a59Server(t)
			r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "/cfg")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			a88NoSecret(t, srv, a88Secrets()...)
			_, msg := a88First(t, srv)
			for _, want := range []string{
				"The file @.git/config:", "extraheader = AUTHORIZATION: [REDACTED]", "url = https://me:[REDACTED]@github.com/o/r.git",
				"[ralph masked the credentials in .git/config as [REDACTED]", "[ralph masked the credentials in gitconf as [REDACTED]",
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("the command's message does not hold %q:\n%s", want, msg)
				}
			}
		})
	}
}

// TestAttack88HomeProjectImportsKeptFiles: in the home directory granted
// with --allow-home-project, ~/CLAUDE.md imports the person's SSH key and
// AWS credentials, as a path and as ~/; each is refused as read_file
// refuses it, said in the prompt, and neither reaches the endpoint.
func TestAttack88HomeProjectImportsKeptFiles(t *testing.T) {
	t.Parallel()
	srv, _ := a59Server(t)
	_, home, _, env := a66Home(t, srv.URL, "CI=true")
	a59Write(t, filepath.Join(home, ".aws", "credentials"), "[default]\naws_secret_access_key = "+a88AWS+"\n", 0o600)
	mustWrite(t, filepath.Join(home, "CLAUDE.md"), "My keys: @.ssh/id_rsa and @~/.aws/credentials and @.aws/credentials\n")
	r := ralph(t, home, env, nil, "--allow-home-project", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a88NoSecret(t, srv, a66Key, a88AWS)
	system, _ := a88First(t, srv)
	for _, want := range []string{"(@.ssh/id_rsa, imported by CLAUDE.md, was left out: it is kept from the model",
		"(@.aws/credentials, imported by CLAUDE.md, was left out: it is kept from the model"} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt does not say %q:\n%s", want, system)
		}
	}
}
