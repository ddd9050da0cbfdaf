package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
)

// The first look at the work tree (git status and git log, for the system
// prompt) runs on the way to a session's first request. Where no
// configuration file can name a filter, it starts at once, without git's
// listing of the configuration that decides what ralph's other gits may
// run (memory/git lookGuard): these tests show that it still runs no
// program a file the model could write names, and that the request does not
// wait for the listing, which runs beside the look for the session's guard.

// TestFirstLookRunsNoProgramOfTheModels: the model's repository (ralph saw
// the project without one) has core.fsmonitor in its .git/config, and in
// the second case a clean filter too, selected by its .gitattributes, for a
// tracked file changed in place at the same size, which git status hashes
// again through the filter. The person's own git runs the payloads there
// (checked first); a one-shot that only says hi must run none of them,
// in its first look or its checkpoints.
func TestFirstLookRunsNoProgramOfTheModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, arm string }{
		// No file mentions a filter: the first look runs without a listing.
		{"fsmonitor", "git config core.fsmonitor '%[1]s'"},
		// A filter is named: the first look waits for the listed guard.
		{"filter", "git config core.fsmonitor '%[1]s' && git config filter.x.clean '%[2]s'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proj, outside, payload := gitAttackDirs(t)
			srv := inlineServer(t, `{"name":"say_hi","loop":true,"responses":[{"text":"hi"}]}`)
			env := gitAttackEnv(t, srv.URL)
			// ralph sees the project without a repository first: the one
			// made next is not known to be the person's.
			if r := ralph(t, proj, env, nil, "say hi"); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			arm := strings.NewReplacer("%[1]s", payload("fsmonitor"), "%[2]s", payload("clean")).Replace(tc.arm)
			gitIn(t, proj, "git init -q -b main && printf '* filter=x\\n' > .gitattributes && echo a > a.txt && git add . && git commit -qm mine && "+
				arm+" && printf 'z\\n' > a.txt && touch -d '2020-01-02 03:04:05' a.txt")
			// Armed: the person's own git, reading without writing the
			// index, runs the payloads (the index keeps a.txt's old stat).
			status := exec.Command("git", "status", "--short")
			status.Dir, status.Env = proj, append(cleanEnv(t, gitEnv...), "GIT_OPTIONAL_LOCKS=0")
			if out, err := status.CombinedOutput(); err != nil {
				t.Fatalf("git status: %v\n%s", err, out)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) == 0 {
				t.Fatal("the person's own git status ran no payload: the test proves nothing")
			}
			for _, e := range entries {
				os.Remove(filepath.Join(outside, e.Name()))
			}
			r := ralph(t, proj, env, nil, "say hi")
			if r.code != 0 || r.stdout != "hi\n" {
				t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
			}
			noPayloadRan(t, outside, "a one-shot's first look and checkpoints")
		})
	}
}

// TestTheRequestWaitsForNoListing records, through a git on PATH that
// logs each start and exit, the gits a one-shot in a fresh repository runs
// and when its request reaches the model. The wrapper makes the listing of
// the configuration (git config --list, which the session's guard needs)
// take two seconds: the request must reach the model before that listing
// ends, after the first look's status, which the system prompt needs, has
// ended. The latest commit subjects are loose objects there, read from
// the repository's files: no git log runs, and the request carries them.
func TestTheRequestWaitsForNoListing(t *testing.T) {
	t.Parallel()
	realGit := needTool(t, "git", "git")
	dir := gitProjectDir(t)
	bin := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "gits.log")
	// The subcommand follows ralph's -c settings, which the wrapper skips.
	wrapper := "#!/bin/sh\nsub=; skip=\nfor a in \"$@\"; do\n  if [ -n \"$skip\" ]; then skip=; continue; fi\n  case \"$a\" in -c) skip=1;; -*) ;; *) sub=$a; break;; esac\ndone\n" +
		"echo \"$(date +%s%N) start $sub\" >> " + logFile + "\n[ \"$sub\" = config ] && sleep 2\n" +
		realGit + " \"$@\"\nrc=$?\necho \"$(date +%s%N) end $sub\" >> " + logFile + "\nexit $rc\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	srv := llmtest.NewServerFunc(func(llmtest.RecordedRequest) llmtest.Response {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err == nil {
			f.WriteString(strconv.FormatInt(time.Now().UnixNano(), 10) + " request\n")
			f.Close()
		}
		return llmtest.Response{Text: "hi"}
	})
	t.Cleanup(srv.Close)
	env := cleanEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	r := ralph(t, dir, env, nil, "--base-url", srv.URL, "say hi")
	if r.code != 0 || r.stdout != "hi\n" {
		t.Fatalf("exit %d %q\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	t.Logf("the gits of a one-shot and its request, in order:\n%s", strings.Join(lines, "\n"))
	at := map[string]int{}
	for i, l := range lines {
		f := strings.Fields(l)
		if key := strings.Join(f[1:], " "); len(f) >= 2 {
			if _, seen := at[key]; !seen {
				at[key] = i
			}
		}
	}
	for _, want := range []string{"end status", "request", "end config"} {
		if _, ok := at[want]; !ok {
			t.Fatalf("no %q in the record", want)
		}
	}
	if _, ok := at["start log"]; ok {
		t.Errorf("a git log ran for subjects that are loose objects")
	}
	if at["request"] > at["end config"] {
		t.Errorf("the request waited for the listing of the configuration")
	}
	if at["request"] < at["end status"] {
		t.Errorf("the request left before the first look's status ended")
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "Recent commits") {
		t.Errorf("the request lacks the latest commit subjects")
	}
}
