#!/usr/bin/env bash
# A fake agent that fails: some output, an error on stderr, exit status 3.
cat > /dev/null
echo "starting"
echo "fatal: the model refused the request" >&2
exit 3
