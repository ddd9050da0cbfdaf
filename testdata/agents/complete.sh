#!/usr/bin/env bash
# A fake agent that finishes its task: it saves the prompt it got on stdin to
# $RALPH_TEST_PROMPT_FILE (when set), works a little and prints the marker.
prompt=$(cat)
if [ -n "${RALPH_TEST_PROMPT_FILE:-}" ]; then
  printf '%s' "$prompt" > "$RALPH_TEST_PROMPT_FILE"
fi
echo "reading the task"
echo "editing hello.txt"
echo "all done"
echo "<promise>COMPLETE</promise>"
