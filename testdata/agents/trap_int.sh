#!/usr/bin/env bash
# A fake agent that cleans up on SIGINT the way claude and codex do: within
# 100 ms it writes "cleaned" to $RALPH_TEST_CLEANUP_FILE and exits 130. It
# records its pid in $RALPH_TEST_PID_FILE and otherwise never finishes.
trap 'sleep 0.05; echo cleaned > "$RALPH_TEST_CLEANUP_FILE"; exit 130' INT
echo "$$" > "$RALPH_TEST_PID_FILE"
echo "working on it"
while :; do sleep 0.02; done
