#!/usr/bin/env bash
# A fake `codex exec --json -`. It records its arguments in
# $RALPH_TEST_ARGS_FILE and the prompt in $RALPH_TEST_PROMPT_FILE (when set),
# then prints a realistic JSONL stream (the thread/turn/item events of codex
# exec --json), with an event of a future version and a stray non-JSON line.
prompt=$(cat)
[ -n "${RALPH_TEST_PROMPT_FILE:-}" ] && printf '%s' "$prompt" > "$RALPH_TEST_PROMPT_FILE"
[ -n "${RALPH_TEST_ARGS_FILE:-}" ] && printf '%s\n' "$@" > "$RALPH_TEST_ARGS_FILE"
cat <<'JSON'
{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Looking at the repository layout**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"README.md\nmain.go\n","exit_code":0,"status":"completed"}}
Reading prompt from stdin...
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"hello.txt","kind":"add"}],"status":"completed"}}
{"type":"item.updated","item":{"id":"item_3","type":"todo_list","items":[{"text":"create hello.txt","completed":true}]}}
{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"Created hello.txt containing hi.\n<promise>COMPLETE</promise>"}}
{"type":"thread.future_event","detail":{"x":1}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
JSON
