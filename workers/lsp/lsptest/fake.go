// Package lsptest is a fake language server for tests: a test binary
// whose TestMain calls Serve when the variable Env is set runs as one,
// so a test starts it by running itself (os.Args[0]).
package lsptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// The fake language server: the test binary run with Env set to a mode
// (TestMain). It publishes a diagnostic for each line of a
// document holding "ERR:" (an error) or "WARN:" (a warning), the rest of
// the line its message, and misbehaves as its mode says:
//
//	ok        publishes with the document's version
//	noversion publishes without a version
//	stale     publishes an older version first, the right one 200ms later
//	crash     exits on the first document, saying "boom" on stderr
//	hang      never answers initialize
//	flood     sends log messages without end once initialized
//	silent    never publishes
//	ask       asks workspace/configuration before it publishes
//	slow      publishes 1.5s after each change
//	phases    publishes as typescript-language-server does when cold:
//	          no version, nothing 3s after each change, then the
//	          diagnostics 350ms after that
//	deaf      stops reading its input once initialized
//	probe     tries to write .git/config of its working directory and
//	          publishes "ERR: wrote .git/config" or "WARN: refused"

// Env names the mode the fake server runs in.
const Env = "RALPH_FAKELS"

// Serve runs the fake server in mode on stdin and stdout until its input
// ends or it is told to exit; it exits the process.
func Serve(mode string) {
	serve(mode)
	os.Exit(0)
}

// diagnose is the fake's diagnostics of a file's text: an error where a
// line says ERR:, a warning where it says WARN:.
func diagnose(text string) []map[string]any {
	diags := []map[string]any{}
	for i, line := range strings.Split(text, "\n") {
		for sev, mark := range map[int]string{1: "ERR:", 2: "WARN:"} {
			if j := strings.Index(line, mark); j >= 0 {
				diags = append(diags, map[string]any{"range": map[string]any{"start": map[string]int{"line": i, "character": j},
					"end": map[string]int{"line": i, "character": len(line)}}, "severity": sev, "message": strings.TrimSpace(line[j+len(mark):])})
			}
		}
	}
	return diags
}

func serve(mode string) {
	r := bufio.NewReader(os.Stdin)
	w := os.Stdout
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	publish := func(uri string, version int, text string, withVersion bool) {
		p := map[string]any{"uri": uri, "diagnostics": diagnose(text)}
		if withVersion {
			p["version"] = version
		}
		send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": p})
	}
	for {
		body := make([]byte, readHeader(r, -1))
		if _, err := io.ReadFull(r, body); err != nil {
			os.Exit(0)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProcessID    json.RawMessage `json:"processId"`
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
					Text    string `json:"text"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		switch msg.Method {
		case "initialize":
			if mode == "hang" {
				continue
			}
			if p := string(msg.Params.ProcessID); p != "" && p != "null" {
				// A server built on vscode-languageserver watches the pid
				// it is given and exits with status 1 when it cannot see
				// it, as it cannot from the sandbox's PID namespace: at
				// once here, so that every test would show it.
				os.Exit(1)
			}
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"capabilities": map[string]any{"textDocumentSync": 1}}})
		case "initialized":
			if mode == "deaf" {
				select {}
			}
			if mode == "flood" {
				for {
					send(map[string]any{"jsonrpc": "2.0", "method": "window/logMessage", "params": map[string]any{"type": 4, "message": strings.Repeat("x", 100)}})
				}
			}
		case "shutdown":
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": nil})
		case "exit":
			os.Exit(0)
		case "textDocument/didOpen", "textDocument/didChange":
			doc := msg.Params.TextDocument
			text := doc.Text
			if len(msg.Params.ContentChanges) > 0 {
				text = msg.Params.ContentChanges[len(msg.Params.ContentChanges)-1].Text
			}
			switch mode {
			case "crash":
				fmt.Fprintln(os.Stderr, "boom")
				os.Exit(3)
			case "silent":
			case "noversion":
				publish(doc.URI, doc.Version, text, false)
			case "stale":
				publish(doc.URI, doc.Version-1, "ERR: stale\n", true)
				go func() { time.Sleep(200 * time.Millisecond); publish(doc.URI, doc.Version, text, true) }()
			case "probe":
				publish(doc.URI, doc.Version, probeWrite(), true)
			case "netprobe":
				publish(doc.URI, doc.Version, probeNet(), true)
			case "phases":
				go func() {
					time.Sleep(3 * time.Second)
					publish(doc.URI, doc.Version, "", false)
					time.Sleep(350 * time.Millisecond)
					publish(doc.URI, doc.Version, text, false)
				}()
			case "slow":
				go func() { time.Sleep(1500 * time.Millisecond); publish(doc.URI, doc.Version, text, true) }()
			case "ask":
				send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "workspace/configuration", "params": map[string]any{"items": []any{map[string]any{"section": "x"}}}})
				// The answer comes back before the next message is read.
				readAnswer(r)
				publish(doc.URI, doc.Version, text, true)
			default:
				publish(doc.URI, doc.Version, text, true)
			}
		}
	}
}

// readAnswer reads one message (the client's answer) and drops it.
func readAnswer(r *bufio.Reader) {
	_, _ = io.ReadFull(r, make([]byte, readHeader(r, 0)))
}

// readHeader reads one message's header and returns its Content-Length,
// or length when it names none; the server ends when its client is gone.
func readHeader(r *bufio.Reader, length int) int {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			os.Exit(0)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			return length
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
}

// probeWrite tries to open .git/config of the working directory (a
// test's project) for writing, which the sandbox refuses, and says what
// happened as a line the fake publishes.
// probeNet dials the address in RALPH_FAKE_LSP_DIAL: a server the
// sandbox holds without network cannot reach it.
func probeNet() string {
	c, err := net.DialTimeout("tcp", os.Getenv("RALPH_FAKE_LSP_DIAL"), 2*time.Second)
	if err != nil {
		return "WARN: no network\n"
	}
	c.Close()
	return "ERR: reached the network\n"
}

func probeWrite() string {
	f, err := os.OpenFile(".git/config", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return "WARN: refused\n"
	}
	f.Close()
	return "ERR: wrote .git/config\n"
}
