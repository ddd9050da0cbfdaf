package e2e

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttack66bIncludedCredentialsStayMasked: the project's repository
// keeps its credentials in files its configuration includes, inside the
// project (include.path = ../ci-creds.conf with the workflow's
// extraheader, .git/creds.inc, and an includeIf's .git/extra.conf with a
// remote's password). read_file, cat and git config show none of them:
// the included files are masked like .git/config. It failed before:
// read_file ci-creds.conf, cat and `git config --get-all` returned the
// raw tokens. In the fallback, where no masked copy is bound, the
// results are redacted.
func TestAttack66bIncludedCredentialsStayMasked(t *testing.T) {
	t.Parallel()
	workflow := "ghs_e2eA66bIncludedToken0123456789ABCDEF"
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + workflow))
	pass := "e2eA66bIncludedPass2"
	secrets := []string{workflow, basic, pass}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, home := attackLayout(t)
			for _, args := range [][]string{
				{"-C", proj, "config", "include.path", "../ci-creds.conf"},
				{"-C", proj, "config", "--add", "include.path", "creds.inc"},
				{"-C", proj, "config", "includeIf.gitdir:" + proj + "/.path", "extra.conf"},
			} {
				if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			writeFileT(t, filepath.Join(proj, "ci-creds.conf"), "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+basic+"\n")
			writeFileT(t, filepath.Join(proj, ".git", "creds.inc"), "[remote \"c\"]\n\turl = https://carol:"+pass+"@host/c.git\n")
			writeFileT(t, filepath.Join(proj, ".git", "extra.conf"), "[remote \"b\"]\n\turl = https://bob:"+pass+"@host/x.git\n")
			srv, results := a66Server(t,
				a66ReadCall("ci-creds.conf"),
				a66ReadCall(".git/extra.conf"),
				a66RunCall("cat ci-creds.conf .git/creds.inc .git/extra.conf"),
				a66RunCall("git config --get-all http.https://github.com/.extraheader; git config --get remote.b.url; git config --get remote.c.url"),
			)
			r := ralph(t, proj, attackEnv(t, home, srv.URL, mode.env), nil, "-y", "read the included configuration")
			res := results()
			if r.code != 0 || len(res) != 4 {
				t.Fatalf("exit %d\n%s\n%s\n%q", r.code, r.stdout, r.stderr, res)
			}
			saw := endpointSaw(srv)
			for _, s := range secrets {
				if strings.Contains(saw, s) {
					t.Errorf("BROKEN: the endpoint received %q", s)
				}
			}
			if !strings.Contains(res[0], "extraheader = AUTHORIZATION: [REDACTED]") || !strings.Contains(res[1], "https://bob:[REDACTED]@host/x.git") {
				t.Errorf("read_file did not return the masked copies:\n%s\n%s", res[0], res[1])
			}
			if !strings.Contains(res[3], "[REDACTED]") {
				t.Errorf("git config did not show the masked values:\n%s", res[3])
			}
			filepath.Walk(filepath.Join(proj, ".ralph"), func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					b, _ := os.ReadFile(p)
					for _, s := range secrets {
						if strings.Contains(string(b), s) {
							t.Errorf("BROKEN: ralph's record %s holds %q", p, s)
						}
					}
				}
				return nil
			})
			if got := readFileT(t, filepath.Join(proj, "ci-creds.conf")); !strings.Contains(got, basic) {
				t.Errorf("ci-creds.conf changed; git needs the real one:\n%s", got)
			}
		})
	}
}
