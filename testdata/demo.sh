#!/usr/bin/env bash
# make demo: run ralph once, end to end, against the bundled scripted model
# (testdata/scenarios/demo.json served on 127.0.0.1 by bin/fakemodel). No API
# key and no network are needed; the model's answers are scripted.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ralph-demo.XXXXXX")
urlfile="$work/.fakemodel-url"
"$root/bin/fakemodel" -scenario "$root/testdata/scenarios/demo.json" >"$urlfile" 2>/dev/null &
fake=$!
# The project directory goes when the demo ends, as the model does, unless
# RALPH_DEMO_KEEP=1 asks to keep it for a look.
cleanup() {
	kill "$fake" 2>/dev/null || true
	if [ "${RALPH_DEMO_KEEP:-}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
for _ in $(seq 200); do [ -s "$urlfile" ] && break; sleep 0.01; done
url=$(head -n1 "$urlfile")
rm -f "$urlfile"

echo "== scripted model (not a real LLM) at $url"
if [ "${RALPH_DEMO_KEEP:-}" = 1 ]; then
	echo "== project directory: $work (kept: RALPH_DEMO_KEEP=1)"
else
	echo "== project directory: $work (removed at the end; RALPH_DEMO_KEEP=1 keeps it)"
fi
echo '$ ralph --output-format json "create hello.txt containing hi"'
cd "$work"
set +e
"$root/bin/ralph" --base-url "$url" --model scripted-demo --output-format json "create hello.txt containing hi"
code=$?
set -e
echo "== exit code: $code"
echo "== $work/hello.txt:"
cat "$work/hello.txt"
echo "== session record:"
find .ralph -type f | sort
exit "$code"
