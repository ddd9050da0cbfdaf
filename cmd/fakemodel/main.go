// Command fakemodel serves a scripted fake OpenAI-compatible model for tests
// and demos. It prints its base URL (ending in /v1) as the first line of
// stdout, so a script can start it in the background, read the URL and point
// ralph at it with OPENAI_BASE_URL. The same scenario is served as
// OpenAI's Responses API and Anthropic's Messages API; -anthropic prints
// the base URL the Messages API's clients take instead (without /v1).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ralph-dev/ralph/coordinator/llm/llmtest"
	"github.com/ralph-dev/ralph/memory/providers"
	"github.com/ralph-dev/ralph/memory/text"
)

// usageText is the help, with the provider table's variables in braces
// (usage fills them in): the table alone spells them
// (TestProviderFactsLiveInTheTable).
const usageText = `fakemodel - a scripted fake OpenAI-compatible model for tests and demos.

It is not a real model: each POST /v1/chat/completions request gets the next
response of a JSON scenario file (see testdata/scenarios/), streamed in the
OpenAI wire format. It only ever listens on the loopback interface.

The first line of stdout is the base URL to use as {openai-url}, e.g.
http://127.0.0.1:41234/v1. It serves until SIGINT/SIGTERM, or until stdin
reaches EOF when -stdin-close is given (so it dies with the script that
started it).

As OpenAI does, chat completions answers HTTP 404 "This model is only
supported in v1/responses and not in v1/chat/completions." for the models
OpenAI serves only on the Responses API (its coding models,
o1-pro, o3-pro), unless the scenario says "translates": true, as a router that
serves them on chat completions does.

The same responses are served as OpenAI's Responses API (POST
/v1/responses, the base URL above, as OpenAI's coding agents' model
providers and ralph's Responses wire take it): a response's "reasoning" as a reasoning item with
its summary and encrypted_content when the request asks for them, tool
calls as function, custom ("type": "custom", freeform input) or local
shell ("type": "local_shell") calls, "failure" as a stream that fails;
requests are checked as the real API checks them (tool calls paired with
their outputs, reasoning given back with its encrypted_content or by the id
of a stored response), and a response's "replay" sends a recording of
testdata/openai-responses.

And as Anthropic's Messages API (POST /v1/messages: thinking, tool_use
blocks, the prompt cache, the real API's request checks and error shapes;
a response's "replay" sends a recording of testdata/anthropic). With
-anthropic the first line is the base URL without /v1, as
{anthropic-url} and ralph's --base-url with --provider anthropic take
it, e.g.
  ralph --provider anthropic --base-url "$(head -1 url)" "say hi"
with {anthropic-key} set (to -api-key's value when it is given).

Usage:
  fakemodel -scenario FILE [-addr 127.0.0.1:0] [-stdin-close] [-anthropic] [-api-key KEY]

Flags:
`

// usage is usageText with the provider table's variables.
func usage() string {
	anthropic, _ := providers.Named("anthropic")
	return strings.NewReplacer("{openai-url}", providers.OpenAIBaseURLEnv,
		"{anthropic-url}", anthropic.BaseURLEnv, "{anthropic-key}", anthropic.KeyEnv).Replace(usageText)
}

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, signals))
}

// run is main without process globals, so the flag handling can be tested
// in-process. It returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, signals <-chan os.Signal) int {
	fs := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "", "scenario JSON `file` to play (required)")
	addr := fs.String("addr", "127.0.0.1:0", "loopback `address` to listen on; port 0 picks a free port")
	stdinClose := fs.Bool("stdin-close", false, "exit when stdin reaches EOF")
	anthropic := fs.Bool("anthropic", false, "print the Messages API's base URL (without /v1) instead of OpenAI's")
	apiKey := fs.String("api-key", "", "refuse requests without this `key` (Bearer, or x-api-key for the Messages API) with 401")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *scenario == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "fakemodel: -scenario FILE is required and no arguments are accepted")
		fs.Usage()
		return 2
	}

	sc, err := llmtest.LoadScenario(*scenario)
	if err != nil {
		fmt.Fprintln(stderr, "fakemodel:", err)
		return 1
	}
	if *apiKey != "" {
		sc.APIKey = *apiKey
	}
	srv, err := llmtest.NewServerAt(sc, *addr)
	if err != nil {
		fmt.Fprintln(stderr, "fakemodel:", err)
		return 1
	}
	defer srv.Close()
	url := srv.URL
	if *anthropic {
		url = strings.TrimSuffix(url, "/v1")
	}
	if _, err := fmt.Fprintln(stdout, url); err != nil {
		fmt.Fprintln(stderr, "fakemodel: cannot print URL:", err)
		return 1
	}

	stdinEOF := make(chan struct{})
	if *stdinClose {
		go func() {
			// Any read error counts as EOF: either way the parent is gone.
			_, _ = io.Copy(io.Discard, stdin)
			close(stdinEOF)
		}()
	}
	select {
	case <-signals:
	case <-stdinEOF:
	}
	fmt.Fprintf(stderr, "fakemodel: served %s\n", text.Counted(len(srv.Requests()), "request", "requests"))
	return 0
}
