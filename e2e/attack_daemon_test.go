package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// sandboxModes are the two sandboxes an attack is tried in: the default
// one, and Landlock alone as where the kernel allows no user namespace.
var sandboxModes = []struct {
	name string
	env  []string
}{
	{"default", nil},
	{"landlock-only", []string{"RALPH_SANDBOX_NO_USERNS=1"}},
}

// attackDirs makes base/proj (a repository), base/outside (writable by
// anyone, so that a payload that runs leaves its mark whatever its user)
// and base/tmp.
func attackDirs(t *testing.T) (proj, outside, tmp string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, outside, tmp = filepath.Join(base, "proj"), filepath.Join(base, "outside"), filepath.Join(base, "tmp")
	for _, d := range []string{proj, outside, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(outside, 0o777)
	gitProject(t, proj)
	return proj, outside, tmp
}

// pidsWith lists the pids of the processes whose command line holds
// token.
func pidsWith(token string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(token)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killWith kills what a failed run left behind, so that a daemon of a
// failing test does not run on after it.
func killWith(t *testing.T, token string) {
	t.Cleanup(func() {
		for _, pid := range pidsWith(token) {
			_ = signalProcess(pid, syscall.SIGKILL)
		}
	})
}

// payloadRuns lists what the payloads wrote to outside: one file each
// that ran, outside the sandbox (inside it, outside is not writable), and
// whether the model's key was in its environment.
func payloadRuns(t *testing.T, outside, key string) []string {
	t.Helper()
	entries, _ := os.ReadDir(outside)
	var runs []string
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(outside, e.Name()))
		runs = append(runs, fmt.Sprintf("%s (key in its environment: %v)", e.Name(), strings.Contains(string(b), key)))
	}
	return runs
}

// TestBackgroundProcessesDieWithTheirCommand is issue 42's first cause,
// the process side: a command starts a setsid'd daemon and a
// double-forked nohup one, and returns. Nothing it started may outlive
// it: once ralph is done, no process of the daemons' loops is left (so
// the markers they append to cannot grow).
func TestBackgroundProcessesDieWithTheirCommand(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, _, tmp := attackDirs(t)
			token := fmt.Sprintf("ralph-daemon-%d-%s", os.Getpid(), mode.name)
			killWith(t, token)
			loop := func(marker string) string {
				return "while :; do echo " + token + " >> " + marker + "; sleep 0.1; done"
			}
			srv, results := commandsServer(t,
				"{ setsid sh -c '"+loop("setsid.marker")+"' > /dev/null 2>&1 < /dev/null & }",
				"{ nohup sh -c '("+loop("nohup.marker")+") &' > /dev/null 2>&1 < /dev/null & }",
				// The daemons' first lines, polled for: a fixed wait is
				// too short on a busy machine.
				"until [ -s setsid.marker ] && [ -s nohup.marker ]; do sleep 0.02; done; echo started",
			)
			env := cleanEnv(t, append(append([]string{"OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp}, gitEnv...), mode.env...)...)
			r := ralph(t, proj, env, nil, "-y", "set up the daemons")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if res := results(); !strings.Contains(res, "started") {
				t.Fatalf("the command did not run:\n%s", res)
			}
			size := func(name string) int64 {
				fi, err := os.Stat(filepath.Join(proj, name))
				if err != nil {
					t.Fatalf("the daemon never ran: %v", err)
				}
				return fi.Size()
			}
			// Both daemons ran (their markers exist). A process holding
			// the token is a daemon's loop: with none left, no marker can
			// grow, which is checked at once rather than by watching the
			// markers for a while.
			size("setsid.marker")
			size("nohup.marker")
			if pids := pidsWith(token); len(pids) > 0 {
				t.Errorf("processes the command started still run after ralph exited: %v", pids)
			}
		})
	}
}

// TestADaemonCannotRearmGitAfterTheRestore is issue 42's first cause as
// it was found: a daemon the command leaves behind waits until the
// post-command restore is done, then keeps pointing .git/commondir at a
// copy of the common dir whose configuration names core.fsmonitor, and
// keeps writing .git/config and a pre-commit hook. After the run these
// are the person's again, and the person's own git status and commit run
// no payload.
func TestADaemonCannotRearmGitAfterTheRestore(t *testing.T) {
	t.Parallel()
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, outside, tmp := attackDirs(t)
			token := fmt.Sprintf("ralph-rearm-%d-%s", os.Getpid(), mode.name)
			killWith(t, token)
			payload := func(name string) string { return "env > " + outside + "/" + name + "; false" }
			configBefore := readFileT(t, filepath.Join(proj, ".git", "config"))
			// The scripts are files the model could as well have written
			// with write_file.
			scripts := map[string]string{
				"fsmonitor.sh":  payload("fsmonitor"),
				"pre-commit.sh": payload("pre-commit"),
				"daemon.sh": strings.Join([]string{
					"sleep 0.5",
					"mkdir -p evil && cp -r .git/. evil/ && rm -f evil/commondir",
					`git config --file evil/config core.fsmonitor "$PWD/fsmonitor.sh"`,
					"while :; do",
					`  echo "$PWD/evil" > .git/commondir`,
					"  cp pre-commit.sh .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
					`  git config --file .git/config core.fsmonitor "$PWD/fsmonitor.sh"`,
					"  sleep 0.1",
					"done 2>/dev/null",
				}, "\n"),
			}
			for name, body := range scripts {
				if err := os.WriteFile(filepath.Join(proj, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			srv, results := commandsServer(t,
				"{ setsid sh ./daemon.sh "+token+" > /dev/null 2>&1 < /dev/null & }",
				"sleep 0.3 && echo armed",
			)
			const key = "sk-e2e-daemon-key-never-leaked"
			env := cleanEnv(t, append(append([]string{"OPENAI_API_KEY=" + key, "OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp}, gitEnv...), mode.env...)...)
			r := ralph(t, proj, env, nil, "-y", "set up the daemon")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if res := results(); !strings.Contains(res, "armed") {
				t.Fatalf("the commands did not run:\n%s", res)
			}
			// No daemon outlived ralph, so none can strike after the
			// checks below: what they see is what stays.
			if pids := pidsWith(token); len(pids) > 0 {
				t.Fatalf("the daemon still runs after ralph exited: %v", pids)
			}
			if _, err := os.Lstat(filepath.Join(proj, ".git", "commondir")); err == nil {
				t.Error(".git/commondir exists after the run")
			}
			if _, err := os.Lstat(filepath.Join(proj, ".git", "hooks", "pre-commit")); err == nil {
				t.Error(".git/hooks/pre-commit exists after the run")
			}
			if got := readFileT(t, filepath.Join(proj, ".git", "config")); got != configBefore {
				t.Errorf(".git/config changed after the run:\n%s", got)
			}
			// The person's own git, with the key in its environment.
			for _, args := range [][]string{{"status"}, {"commit", "-q", "--allow-empty", "-m", "mine"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir, cmd.Env = proj, cleanEnv(t, append([]string{"OPENAI_API_KEY=" + key}, gitEnv...)...)
				cmd.Run()
			}
			for _, run := range payloadRuns(t, outside, key) {
				t.Errorf("after the run, the person's git ran the payload %s", run)
			}
		})
	}
}

// TestRootCommandsHoldNoCapability is issue 42's tenth cause: run as
// root, the Landlock-only sandbox left a command every capability but
// CAP_SYS_PTRACE, and one added an address to the host's loopback. Now a
// command holds none, in either sandbox, and the address is refused.
func TestRootCommandsHoldNoCapability(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the capabilities of root's commands need ralph run as root")
	}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			proj, _, tmp := attackDirs(t)
			const addr = "127.0.0.9/8"
			t.Cleanup(func() { exec.Command("ip", "addr", "del", addr, "dev", "lo").Run() })
			srv, results := commandsServer(t,
				"grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status",
				"(ip addr add "+addr+" dev lo 2>/dev/null && echo address-added || echo address-refused)",
			)
			env := cleanEnv(t, append(append([]string{"OPENAI_BASE_URL=" + srv.URL, "TMPDIR=" + tmp}, gitEnv...), mode.env...)...)
			r := ralph(t, proj, env, nil, "-y", "set up")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			res := results()
			if !strings.Contains(res, "address-") {
				t.Fatalf("the commands did not run:\n%s", res)
			}
			for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if !strings.Contains(res, set+":\t0000000000000000") {
					t.Errorf("a root command's %s is not empty:\n%s", set, res)
				}
			}
			if strings.Contains(res, "address-added") {
				t.Errorf("a root command added an address to the loopback:\n%s", res)
			}
		})
	}
}
