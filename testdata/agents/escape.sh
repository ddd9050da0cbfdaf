#!/usr/bin/env bash
# A fake agent that starts a process outside its own process group (setsid,
# as claude does for its shell commands), records that process's pid in
# $RALPH_TEST_ESCAPED_PID_FILE and its own in $RALPH_TEST_PID_FILE, then
# hangs. Stopping it must stop the escaped process too.
setsid sleep 300 &
echo "$!" > "$RALPH_TEST_ESCAPED_PID_FILE"
echo "$$" > "$RALPH_TEST_PID_FILE"
echo "working on it"
sleep 300
