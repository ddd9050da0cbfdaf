#!/usr/bin/env bash
# A fake agent that does its task exactly once however often it is started:
# it appends the task's title to done.log unless it is there already (a
# retried attempt after a crash finds its own earlier work), then prints
# the completion marker.
prompt=$(cat)
title=$(printf '%s\n' "$prompt" | sed -n 's/^Your task ([^)]*): //p' | head -n 1)
grep -qxF "$title" done.log 2>/dev/null || printf '%s\n' "$title" >> done.log
echo "<promise>COMPLETE</promise>"
