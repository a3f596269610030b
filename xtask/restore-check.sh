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
#   unshare -rn xtask/restore-check.sh codex /tmp/r/npm/node_modules/.bin/codex target/debug/deja
#   unshare -rn xtask/restore-check.sh gemini /tmp/r/npm/node_modules/.bin/gemini target/debug/deja
#
# Harnesses: claude (Claude Code), codex (Codex CLI), gemini (Gemini CLI). Prints the
# versions checked and PASS, or why not.
set -euo pipefail

harness=${1:?harness id (claude, codex, gemini)}
bin=$(realpath "${2:?path to the harness binary}")
deja=$(realpath "${3:?path to the deja binary}")
here=$(cd "$(dirname "$0")" && pwd)

ip link set lo up 2>/dev/null || true
work=$(mktemp -d)
export HOME=$work/home DEJA_WATCH=off
mkdir -p "$HOME/project"
log=$work/requests.jsonl
mock=
# The mock reads its script (MOCK_STEPS) from its own environment, so each run gets a
# mock of its own: the first runs a shell call, the resumed one only answers, and the
# shell output can reach the resumed request only from the restored file.
start_mock() {
    if [ -n "$mock" ]; then kill "$mock" 2>/dev/null || true; wait "$mock" 2>/dev/null || true; fi
    MOCK_STEPS=$1 python3 "$here/mock_model.py" --port 8787 --log "$log" 2>>"$work/mock.err" &
    mock=$!
    for _ in $(seq 50); do
        (echo > /dev/tcp/127.0.0.1/8787) 2>/dev/null && break
        sleep 0.1
    done
}
trap 'kill $mock 2>/dev/null || true' EXIT
start_mock shell,answer
cd "$HOME/project"
marker=zebrafinch$RANDOM

case $harness in
claude)
    export ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=sk-ant-test IS_SANDBOX=1 DISABLE_AUTOUPDATER=1
    "$bin" -p "remember the word $marker" --dangerously-skip-permissions >"$work/first.out"
    transcript=$(find "$HOME/.claude/projects" -name '*.jsonl' -not -path '*/subagents/*' | head -1)
    id=$(basename "$transcript" .jsonl)
    resume() { "$bin" -p --resume "$id" "which word did I ask you to remember?" --dangerously-skip-permissions; }
    ;;
codex)
    # A provider of its own pointed at the mock (Responses API), its key from the
    # environment: no login, no network.
    export CODEX_HOME=$HOME/.codex MOCK_KEY=sk-test
    mkdir -p "$CODEX_HOME"
    cat >"$CODEX_HOME/config.toml" <<'TOML'
model = "gpt-5-codex"
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:8787/v1"
wire_api = "responses"
env_key = "MOCK_KEY"
TOML
    run() { "$bin" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "$@"; }
    run "remember the word $marker" >"$work/first.out" 2>&1
    transcript=$(find "$CODEX_HOME/sessions" -name 'rollout-*.jsonl' | head -1)
    id=$(head -1 "$transcript" | python3 -c 'import json,sys; print(json.load(sys.stdin)["payload"]["id"])')
    # Codex keeps the thread's row in state_5.sqlite; deja leaves it as it is.
    resume() { run resume "$id" "which word did I ask you to remember?"; }
    ;;
gemini)
    # Gemini API key auth against the mock; a model named so no routing call is made.
    export GEMINI_API_KEY=test-key GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787
    mkdir -p "$HOME/.gemini"
    echo '{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}}}' >"$HOME/.gemini/settings.json"
    run() { "$bin" -m gemini-2.5-flash --yolo "$@"; }
    run -p "remember the word $marker" >"$work/first.out" 2>&1
    transcript=$(find "$HOME/.gemini/tmp" -path '*/chats/session-*' | head -1)
    id=$(head -1 "$transcript" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionId"])')
    resume() { run --resume "$id" -p "which word did I ask you to remember?"; }
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
start_mock answer
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
