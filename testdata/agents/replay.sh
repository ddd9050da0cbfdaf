#!/usr/bin/env bash
# A fake claude or codex that replays real output of the CLI: a file of
# samples/ (see samples/README.md). Linked as `claude` or `codex` into a
# directory on PATH, it stands in for the CLI in ralph's tests.
#
#   RALPH_TEST_SAMPLE       the sample: a name in samples/ or an absolute path
#   RALPH_TEST_ARGS_FILE    its arguments are appended here, one a line, then "--"
#   RALPH_TEST_ENV_FILE     its environment is appended here, then "--"
#   RALPH_TEST_PROMPT_FILE  the prompt it read on stdin is written here
#   RALPH_TEST_WRITE        a file it appends a line to: the write the sample reports
#   RALPH_TEST_STDERR       a line it prints on stderr first
#   RALPH_TEST_EXIT         its exit status (default 0)
#   RALPH_TEST_NEED         a variable it needs: without it, it replays
#                           codex_missing_env and exits 1, as codex does when
#                           its provider's env_key is not set
prompt=$(cat)
[ -n "${RALPH_TEST_PROMPT_FILE:-}" ] && printf '%s' "$prompt" > "$RALPH_TEST_PROMPT_FILE"
[ -n "${RALPH_TEST_ARGS_FILE:-}" ] && printf '%s\n' "$@" -- >> "$RALPH_TEST_ARGS_FILE"
[ -n "${RALPH_TEST_ENV_FILE:-}" ] && { env; echo --; } >> "$RALPH_TEST_ENV_FILE"
[ -n "${RALPH_TEST_STDERR:-}" ] && printf '%s\n' "$RALPH_TEST_STDERR" >&2
samples=$(dirname "$(readlink -f "$0")")/samples
sample=${RALPH_TEST_SAMPLE:-}
status=${RALPH_TEST_EXIT:-0}
if [ -n "${RALPH_TEST_NEED:-}" ] && [ -z "$(printenv "$RALPH_TEST_NEED")" ]; then
  sample=codex_missing_env status=1
elif [ -n "${RALPH_TEST_WRITE:-}" ]; then
  echo "written by the fake agent" >> "$RALPH_TEST_WRITE"
fi
case $sample in
  /*) cat "$sample" ;;
  *) cat "$samples/$sample.jsonl" ;;
esac
exit "$status"
