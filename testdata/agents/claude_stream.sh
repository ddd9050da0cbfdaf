#!/usr/bin/env bash
# A fake `claude -p --output-format stream-json --verbose`. It records its
# arguments in $RALPH_TEST_ARGS_FILE and the prompt in $RALPH_TEST_PROMPT_FILE
# (when set), then prints a realistic stream: init, a text block, a tool call
# whose result quotes the completion marker (as when claude reads a prompt
# file), a stray non-JSON line, the final text and the result. With
# RALPH_TEST_NO_COMPLETE=1 the final text does not say the task is complete.
prompt=$(cat)
[ -n "${RALPH_TEST_PROMPT_FILE:-}" ] && printf '%s' "$prompt" > "$RALPH_TEST_PROMPT_FILE"
[ -n "${RALPH_TEST_ARGS_FILE:-}" ] && printf '%s\n' "$@" > "$RALPH_TEST_ARGS_FILE"
final='Created hello.txt containing hi.\n\n<promise>COMPLETE</promise>'
if [ "${RALPH_TEST_NO_COMPLETE:-}" = 1 ]; then
  final='I could not finish: the tests still fail.'
fi
sid=3f2c1b7e-9d4a-4e2b-8c61-0a5b7d9e1f23
cat <<JSON
{"type":"system","subtype":"init","cwd":"$PWD","session_id":"$sid","tools":["Bash","Edit","Read","Write"],"mcp_servers":[],"model":"claude-sonnet-4-5-20250929","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY"}
{"type":"assistant","message":{"id":"msg_01A","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"I'll read the prompt file first."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":1830,"cache_read_input_tokens":12000,"output_tokens":2,"service_tier":"standard"}},"parent_tool_use_id":null,"session_id":"$sid"}
{"type":"assistant","message":{"id":"msg_01A","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"toolu_01X","name":"Bash","input":{"command":"cat PROMPT.md","description":"Show the prompt file"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":1830,"cache_read_input_tokens":12000,"output_tokens":80,"service_tier":"standard"}},"parent_tool_use_id":null,"session_id":"$sid"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01X","type":"tool_result","content":"When every task is done, print <promise>COMPLETE</promise>.","is_error":false}]},"parent_tool_use_id":null,"session_id":"$sid"}
warning: a plugin printed to stdout
{"type":"assistant","message":{"id":"msg_01B","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"$final"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":6,"cache_creation_input_tokens":120,"cache_read_input_tokens":13830,"output_tokens":30,"service_tier":"standard"}},"parent_tool_use_id":null,"session_id":"$sid"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":6421,"duration_api_ms":5980,"num_turns":3,"result":"$final","session_id":"$sid","total_cost_usd":0.0421,"usage":{"input_tokens":10,"cache_creation_input_tokens":1950,"cache_read_input_tokens":25830,"output_tokens":112,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"},"permission_denials":[],"uuid":"a1b2c3d4-0000-4000-8000-000000000001"}
JSON
