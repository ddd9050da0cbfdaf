#!/usr/bin/env bash
# A fake agent that prints its environment, to check what ralph passes on.
cat > /dev/null
env
