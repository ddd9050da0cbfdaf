package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

const demoScenario = "../../testdata/scenarios/demo.json"

// buildBinary compiles the command once per test into a temp dir, because
// the behaviour under test (stdout line, signals, stdin EOF) is the
// process's.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakemodel")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startBinary runs the command and returns the URL it printed.
func startBinary(t *testing.T, bin string, args ...string) (*exec.Cmd, io.WriteCloser, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading URL line: %v (stderr: %s)", err, stderr)
	}
	return cmd, stdin, strings.TrimSpace(line), stderr
}

func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("fakemodel did not exit")
		return nil
	}
}

func TestBinaryServesScenarioUntilStdinCloses(t *testing.T) {
	bin := buildBinary(t)
	cmd, stdin, url, stderr := startBinary(t, bin, "-scenario", demoScenario, "-stdin-close")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("first stdout line = %q, want a loopback /v1 URL", url)
	}

	cfg := openai.DefaultConfig("any")
	cfg.BaseURL = url
	client := openai.NewClientWithConfig(cfg)
	stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:    "scripted-demo",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "make hello.txt"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var content, name string
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range resp.Choices {
			content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				name += tc.Function.Name
			}
		}
	}
	stream.Close()
	if content != "I'll create the file." || name != "write_file" {
		t.Errorf("got content %q, tool %q", content, name)
	}

	stdin.Close()
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("exit: %v (stderr: %s)", err, stderr)
	}
	if !strings.Contains(stderr.String(), "served 1 request\n") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestBinaryStopsOnSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	cmd, _, _, stderr := startBinary(t, bin, "-scenario", demoScenario)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("exit after SIGTERM: %v (stderr: %s)", err, stderr)
	}
}

func TestRunRefusesNonLoopbackAddr(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-scenario", demoScenario, "-addr", "0.0.0.0:0"}, strings.NewReader(""), &stdout, &stderr, nil)
	if code == 0 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "loopback") {
		t.Errorf("code %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, os.Stdin, &stdout, &stderr, nil); code != 0 ||
		!strings.Contains(stderr.String(), "scripted fake OpenAI-compatible model for tests and demos") {
		t.Errorf("--help: code %d, output %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run(nil, os.Stdin, &stdout, &stderr, nil); code != 2 || !strings.Contains(stderr.String(), "-scenario") {
		t.Errorf("no flags: code %d, output %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-scenario", "does-not-exist.json"}, os.Stdin, &stdout, &stderr, nil); code != 1 ||
		!strings.Contains(stderr.String(), "does-not-exist.json") {
		t.Errorf("missing file: code %d, output %q", code, stderr.String())
	}
}

func TestRunStopsOnSignalChannel(t *testing.T) {
	signals := make(chan os.Signal, 1)
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-scenario", demoScenario}, strings.NewReader(""), &stdout, &stderr, signals)
	}()
	signals <- os.Interrupt
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("code %d, stderr %q", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop on the signal")
	}
}
