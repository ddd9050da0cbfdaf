#!/usr/bin/env bash
# A fake agent that never finishes: it starts a background child, writes its
# own pid to $RALPH_TEST_PID_FILE and the child's to $RALPH_TEST_CHILD_PID_FILE,
# then sleeps. Ralph must kill both, as one process group.
sleep 300 &
echo "$!" > "$RALPH_TEST_CHILD_PID_FILE"
echo "$$" > "$RALPH_TEST_PID_FILE"
echo "working on it"
sleep 300
