package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
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

// With -anthropic the first line is the Messages API's base URL, and the
// scenario is served there, its reasoning as a thinking block, to a
// client with the key given by -api-key.
func TestBinaryServesMessagesAPI(t *testing.T) {
	bin := buildBinary(t)
	_, _, url, stderr := startBinary(t, bin, "-scenario", "../../testdata/scenarios/anthropic_thinking.json", "-anthropic", "-api-key", "k")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, "/v1") {
		t.Fatalf("first stdout line = %q, want a loopback URL without /v1", url)
	}
	post := func(key string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, url+"/v1/messages", strings.NewReader(
			`{"model":"claude-x","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"write a and b"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("wrong"); code != http.StatusUnauthorized || !strings.Contains(body, "authentication_error") {
		t.Errorf("wrong key: %d %s", code, body)
	}
	code, body := post("k")
	if code != http.StatusOK || !strings.Contains(body, `"type":"thinking"`) || strings.Count(body, `"type":"tool_use"`) != 2 {
		t.Errorf("messages: %d %s (stderr %s)", code, body, stderr)
	}
}

// Chat completions refuses gpt-5-codex with OpenAI's 404 and uses no
// response for it; the Responses API serves the scenario, its reasoning
// with a summary and encrypted_content, a custom tool call as such.
func TestBinaryServesResponsesAPI(t *testing.T) {
	bin := buildBinary(t)
	cmd, stdin, url, stderr := startBinary(t, bin, "-scenario", "../../testdata/scenarios/responses_codex.json", "-stdin-close", "-api-key", "k")
	post := func(path, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("/chat/completions", `{"model":"gpt-5-codex","stream":true,"messages":[{"role":"user","content":"add hello.txt"}]}`)
	if want := `{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error","param":"model","code":null}}`; code != http.StatusNotFound || body != want {
		t.Errorf("chat completions for gpt-5-codex: %d %s", code, body)
	}
	code, body = post("/responses", `{"model":"gpt-5-codex","stream":true,"store":false,"include":["reasoning.encrypted_content"],`+
		`"reasoning":{"effort":"medium","summary":"auto"},"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"add hello.txt"}]}]}`)
	enc := llmtest.EncryptedContent("**Planning** I add hello.txt with a patch.", 1)
	for _, want := range []string{"event: response.reasoning_summary_text.delta", `"encrypted_content":"` + enc + `"`,
		"event: response.custom_tool_call_input.delta", `"type":"custom_tool_call"`, `"name":"apply_patch"`, "event: response.completed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Responses stream has no %s: %d\n%s", want, code, body)
		}
	}
	stdin.Close()
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("exit: %v (stderr: %s)", err, stderr)
	}
	if !strings.Contains(stderr.String(), "served 2 requests\n") {
		t.Errorf("stderr = %q", stderr)
	}
}
