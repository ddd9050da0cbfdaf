//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size bytes and returns a git project on it.
// Mounting needs root (CI runs as root); elsewhere the test cannot run.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount a %s tmpfs: %v", size, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	proj := filepath.Join(mnt, "p")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	gitProject(t, proj)
	return proj
}

// The command the stand-in model runs to fill the disk: more than the
// file system holds, so the disk is full when it ends.
const fillDisk = `{"name":"run_command","arguments":"{\"command\":\"head -c 4000000 /dev/zero > fill; echo filled\"}"}`

// TestFullDiskOneShot is issue 43's sixth point for a one-shot: a command
// fills the disk, and ralph's result is one sentence naming the file
// system and the space left, exit 1 — not a raw write error of a
// temporary file. After space is freed, -c continues the session.
func TestFullDiskOneShot(t *testing.T) {
	t.Parallel()
	proj := smallDisk(t, "3m")
	srv := inlineServer(t, `{"name":"fill","responses":[
		{"text":"filling","tool_calls":[`+fillDisk+`]},
		{"text":"I filled it."},
		{"text":"Here again."}]}`)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	r := ralph(t, proj, env, nil, "-y", "--output-format", "json", "fill the disk")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res := resultLine(t, r.stdout)
	msg, _ := res["result"].(string)
	mnt := filepath.Dir(proj)
	for _, want := range []string{"the file system of " + proj, "on " + mnt + ", tmpfs", "is full (", "free of 3.0 MB", "ralph -c continues"} {
		if !strings.Contains(msg, want) || !strings.Contains(r.stderr, want) {
			t.Errorf("the result does not say %q:\nresult: %s\nstderr: %s", want, msg, r.stderr)
		}
	}
	if strings.Contains(msg, ".tmp-") {
		t.Errorf("the result names a temporary file: %s", msg)
	}
	if err := os.Remove(filepath.Join(proj, "fill")); err != nil {
		t.Fatal(err)
	}
	r = ralph(t, proj, env, nil, "-c", "--output-format", "json", "are you there?")
	if r.code != 0 || resultLine(t, r.stdout)["result"] != "Here again." {
		t.Fatalf("after space was freed, -c: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestFullDiskRunWaitsForSpace is the same for ralph run: the attempt that
// filled the disk is not counted, the loop says once that it waits for
// space (stderr and session.json) and starts nothing; once space is freed
// it goes on, and every task is done, each once, with no retry spent.
func TestFullDiskRunWaitsForSpace(t *testing.T) {
	t.Parallel()
	proj := smallDisk(t, "3m")
	if err := os.WriteFile(filepath.Join(proj, "RALPH_TASKS.md"), []byte("- [ ] fill the disk\n- [ ] second task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := inlineServer(t, `{"name":"runfill","responses":[
		{"text":"filling","tool_calls":[`+fillDisk+`]},
		{"text":"claim","tool_calls":[{"name":"complete_task","arguments":"{\"id\":\"t1\",\"summary\":\"filled\"}"}]},
		{"text":"I am done."},
		{"text":"again","tool_calls":[{"name":"complete_task","arguments":"{\"id\":\"t1\",\"summary\":\"ok now\"}"}]},
		{"text":"t1 done."},
		{"text":"t2","tool_calls":[{"name":"complete_task","arguments":"{\"id\":\"t2\",\"summary\":\"two\"}"}]},
		{"text":"t2 done."}]}`)
	env := cleanEnv(t, "OPENAI_BASE_URL="+srv.URL)
	cmd, out, errb := startRalph(t, proj, env, "run", "-y", "--retries", "0")
	waitFor(t, "the loop to wait for space", time.Minute, func() bool { return strings.Contains(errb.String(), "waiting for space") })
	// Nothing starts while the disk stays full.
	time.Sleep(1500 * time.Millisecond)
	if n := strings.Count(errb.String(), "waiting for space"); n != 1 {
		t.Errorf("the wait was said %d times, want once:\n%s", n, errb.String())
	}
	if err := os.Remove(filepath.Join(proj, "fill")); err != nil {
		t.Fatal(err)
	}
	code, _ := exitCode(t, cmd, time.Minute)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	tasks, _ := os.ReadFile(filepath.Join(proj, "RALPH_TASKS.md"))
	if strings.Count(string(tasks), "- [x]") != 2 {
		t.Fatalf("not every task is done:\n%s\n%s", tasks, errb.String())
	}
	all := out.String() + errb.String()
	for _, want := range []string{"there is space again", "all tasks done: 2 done, 0 failed"} {
		if !strings.Contains(all, want) {
			t.Errorf("the run did not say %q:\n%s", want, all)
		}
	}
	if strings.Contains(errb.String(), "circuit breaker") || strings.Contains(errb.String(), "could not be saved") {
		t.Errorf("the full disk tripped the breaker or lost the record:\n%s", errb.String())
	}
}

// TestFullDiskChat is the same in the chat shell: the message whose
// command filled the disk fails with the one sentence (no raw write error
// of a temporary file), the shell stays, and once space is freed the
// next message is answered in the same conversation.
func TestFullDiskChat(t *testing.T) {
	t.Parallel()
	proj := smallDisk(t, "3m")
	srv := inlineServer(t, `{"name":"fillchat","responses":[
		{"text":"filling","tool_calls":[`+fillDisk+`]},
		{"text":"I filled it."},
		{"text":"Still here."}]}`)
	r := startPTY(t, proj, chatEnv(t), "chat", "-y", "--base-url", srv.URL)
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("fill the disk\r")
	r.waitFor("is full (", 30*time.Second)
	screen := r.screen()
	t.Logf("screen:\n%s", screen)
	for _, want := range []string{"tmpfs", "free of 3.0 MB", "send your message again"} {
		if !strings.Contains(strings.Join(strings.Fields(screen), " "), want) {
			t.Errorf("the chat did not say %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, ".tmp-") {
		t.Errorf("the chat shows a temporary file's name:\n%s", screen)
	}
	if err := os.Remove(filepath.Join(proj, "fill")); err != nil {
		t.Fatal(err)
	}
	r.waitIdle(10*time.Second, nil)
	r.typeKeys("are you there?\r")
	r.waitFor("Still here.", 30*time.Second)
	r.leave(0, 10*time.Second)
}
