#!/usr/bin/env bash
# Proves `deja restore` with a real harness release, offline: in a throwaway HOME and a
# network namespace with only loopback, the harness runs a first prompt against
# xtask/mock_model.py (which makes it call its shell tool), deja indexes the session, the
# transcript is deleted (as the harness's own retention sweep would), deja notices and
# restores it, and the harness resumes the restored session by id. The check passes when
# the model's request for the resumed prompt carries the restored turns: the first
# prompt's marker word and the shell command's output.
#
# Not run by `cargo test` (it needs the harness's release, installed from npm).
#
#   npm install --prefix /tmp/r/npm @anthropic-ai/claude-code   # or @openai/codex, @google/gemini-cli
#   cargo build -p deja-cli
#   unshare -rn xtask/restore-check.sh claude /tmp/r/npm/node_modules/.bin/claude target/debug/deja
#
# Harnesses: claude (Claude Code). Prints the versions checked and PASS, or why not.
set -euo pipefail

harness=${1:?harness id (claude)}
bin=$(realpath "${2:?path to the harness binary}")
deja=$(realpath "${3:?path to the deja binary}")
here=$(cd "$(dirname "$0")" && pwd)

ip link set lo up 2>/dev/null || true
work=$(mktemp -d)
export HOME=$work/home DEJA_WATCH=off
mkdir -p "$HOME/project"
log=$work/requests.jsonl
python3 "$here/mock_model.py" --port 8787 --log "$log" 2>"$work/mock.err" &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    (echo > /dev/tcp/127.0.0.1/8787) 2>/dev/null && break
    sleep 0.1
done
cd "$HOME/project"
marker=zebrafinch$RANDOM

case $harness in
claude)
    export ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=sk-ant-test IS_SANDBOX=1 DISABLE_AUTOUPDATER=1
    MOCK_STEPS=shell,answer "$bin" -p "remember the word $marker" --dangerously-skip-permissions >"$work/first.out"
    transcript=$(find "$HOME/.claude/projects" -name '*.jsonl' -not -path '*/subagents/*' | head -1)
    id=$(basename "$transcript" .jsonl)
    resume() { MOCK_STEPS=answer "$bin" -p --resume "$id" "which word did I ask you to remember?" --dangerously-skip-permissions; }
    ;;
*)
    echo "restore-check: no scenario for $harness yet" >&2
    exit 2
    ;;
esac

echo "harness: $("$bin" --version 2>/dev/null | head -1); deja: $("$deja" --version)"
"$deja" index --quiet
rm "$transcript"
"$deja" index --json >"$work/index.json"
grep -q '"sources_gone": 1' "$work/index.json" || { echo "FAIL: deja did not notice the deleted transcript"; exit 1; }
"$deja" search --deleted --no-refresh | grep -q "$id" || { echo "FAIL: deja search --deleted does not list $id"; exit 1; }
"$deja" restore "$id"
: >"$log"
resume >"$work/resumed.out"
# The last request the model got for the resumed prompt holds the restored turns.
python3 - "$log" "$marker" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bodies = [json.dumps(l.get("body")) for l in lines if l.get("method") == "POST" and "which word" in json.dumps(l.get("body"))]
if not bodies:
    sys.exit("FAIL: the resumed prompt never reached the model")
last = bodies[-1]
for want in (sys.argv[2], "deja-mock-ran"):
    if want not in last:
        sys.exit(f"FAIL: the resumed request lacks {want!r}")
print("PASS: the resumed request carries the restored prompt and the shell call's output")
EOF
