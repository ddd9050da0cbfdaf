// Package llmtest is a scripted fake of an OpenAI-compatible chat
// completions server (and of the Messages, Responses and Gemini APIs), for tests,
// benchmarks and the demo.
//
// A Server listens on the loopback interface only and plays a Scenario: each
// POST /v1/chat/completions request consumes the next Response in arrival
// order. Streaming requests get the real OpenAI server-sent-event format
// (content deltas, tool_calls deltas split by index, finish_reason, an
// optional usage chunk and "data: [DONE]"), exactly as go-openai's
// CreateChatCompletionStream expects; non-streaming requests get a
// chat.completion object built from the same Response. Scripted HTTP errors,
// delays, truncated streams and raw payloads let tests reach the failure
// paths that a real model only produces occasionally. A scenario's flavor,
// no_tools and refuse, and a response's stream_error, stall, empty_body
// and no_usage make it behave like the real servers ralph meets (Ollama,
// LM Studio, vLLM, llama.cpp's server, OpenRouter); flavor.go cites which
// server does what.
//
// The same scripted responses are served, in the same order, as
// Anthropic's Messages API (POST /v1/messages, messages.go), OpenAI's
// Responses API (POST /v1/responses, responses.go) and Google's Gemini API
// (POST /v1beta/models/MODEL:streamGenerateContent, gemini.go), so that
// the coding agents' own CLIs — claude with ANTHROPIC_BASE_URL, codex with
// a model provider, gemini with GOOGLE_GEMINI_BASE_URL — can be run
// against the server (see apis.go). The Messages and Responses APIs are
// also the ones ralph's own clients meet, so they behave as the real
// APIs do. The Messages API checks requests (messages_check.go),
// simulates the prompt cache from the cache_control breakpoints
// (messages_cache.go), streams thinking with signatures, pings and
// padded data, answers errors and rate limits in Anthropic's shapes, and
// replays recorded real output (replay.go, testdata/anthropic). The
// Responses API checks the input as OpenAI does (responses_check.go: the
// pairing of tool calls and outputs, reasoning items given back by id or
// by encrypted_content, every refusal with OpenAI's status and words),
// streams reasoning summaries, encrypted reasoning, custom tool and local
// shell calls, ends a response incomplete or failed, can simulate
// OpenAI's prompt cache (responses_cache.go), and replays recorded real
// streams (testdata/openai-responses). Chat completions refuses the
// models OpenAI serves only on the Responses API, as OpenAI does
// (Scenario.Translates serves them, as a router does).
//
// Every request is recorded (see RecordedRequest) so tests can check what
// the client sent, and ServerTime lets benchmarks separate the client's own
// overhead from the scripted model latency.
package llmtest
