#!/usr/bin/env bash
# The scorecard of `acp check`: runs it against every peer we can run here and writes the
# table into README.md (between the scorecard markers), or prints it (--print).
#
#   tools/scorecard.sh            # build, run every row, rewrite the README's table
#   tools/scorecard.sh --print    # the same, the table on stdout only
#   SCORECARD_AGENTS='gemini=gemini --acp|claude=npx @zed-industries/claude-code-acp' tools/scorecard.sh --print
#
# Rows: `acp agent` (v1, with --history, and v2), the official TypeScript SDK's agent
# (interop/agent.mjs) and Python SDK's agent (interop/python/check_agent.py), the official Rust
# SDK's examples `simple_agent` (v1) and `simple_agent_v2` (v2), built unchanged from the crate
# agent-client-protocol 5.2.0 that interop-rust pins; `acp client` (v1 and v2), the TypeScript
# SDK's client (interop/prompt_client.mjs) and the Python SDK's (interop/python/prompt_client.py).
# A peer whose runtime is missing (node and interop/node_modules, the venv interop/python/.venv,
# the Rust SDK crate) is listed as not run. Published agents: SCORECARD_AGENTS, `|`-separated
# `NAME=COMMAND LINE` entries (split on spaces), each checked as a v1 agent; they are never
# written into the README unless SCORECARD_README_AGENTS=1.
#
# Each cell is pass/fail/skip/blocked for the requirements of that level; `exit` is acp check's
# exit status (0 no MUST failed, 1 a MUST failed, 3 gated or not started).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PRINT=0
[[ "${1:-}" == "--print" ]] && PRINT=1

echo "scorecard: building acp (with unstable_protocol_v2)" >&2
cargo build -q -p acp-cli --features unstable_protocol_v2
ACP=$ROOT/target/debug/acp
WORK=$(mktemp -d "${TMPDIR:-/tmp}/acp-scorecard.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The official Rust SDK's examples, built unchanged from the registry's copy of the crate, with
# interop-rust's lock (so the same versions as its tests); nothing of it enters the repository.
sdk_examples() {
    local src
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/agent-client-protocol-5.2.0 2>/dev/null | head -1)
    if [[ -z "$src" ]]; then
        cargo fetch -q --manifest-path interop-rust/Cargo.toml >&2 || return 1
        src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/agent-client-protocol-5.2.0 2>/dev/null | head -1)
        [[ -n "$src" ]] || return 1
    fi
    local dir=$ROOT/target/sdk-examples
    mkdir -p "$dir/src/bin"
    cat > "$dir/Cargo.toml" <<'EOF'
[package]
name = "sdk-examples"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
agent-client-protocol = { version = "=5.2.0", features = ["stdio", "unstable_protocol_v2"] }
tokio = { version = "1.47", features = ["rt-multi-thread", "macros", "sync", "io-std", "io-util", "time"] }
EOF
    [[ -f "$dir/Cargo.lock" ]] || cp interop-rust/Cargo.lock "$dir/Cargo.lock"
    cp "$src/examples/simple_agent.rs" "$src/examples/simple_agent_v2.rs" "$dir/src/bin/"
    (cd "$dir" && CARGO_TARGET_DIR=$ROOT/target cargo build -q --bins --offline 2>/dev/null \
        || CARGO_TARGET_DIR=$ROOT/target cargo build -q --bins) >&2
}

have_node() { command -v node >/dev/null && [[ -d interop/node_modules/@agentclientprotocol/sdk ]]; }
PY=${ACP_PYTHON:-$ROOT/interop/python/.venv/bin/python}
have_python() { "$PY" -c 'import acp' >/dev/null 2>&1; }
HAVE_SDK_EXAMPLES=0
echo "scorecard: building the Rust SDK's example agents" >&2
if sdk_examples; then HAVE_SDK_EXAMPLES=1; fi

ROWS=$WORK/rows.tsv
: > "$ROWS"

# run NAME ROLE PROTOCOL AVAILABLE COMMAND...: one row.
run() {
    local name=$1 role=$2 protocol=$3 available=$4
    shift 4
    if [[ "$available" != 1 ]]; then
        printf '%s\t%s\t%s\tnot run\n' "$name" "$role" "$protocol" >> "$ROWS"
        return
    fi
    echo "scorecard: $name ($role, v$protocol)" >&2
    local out=$WORK/report.json
    (cd "$WORK" && "$ACP" check "$role" --protocol "$protocol" --format json -- "$@" > "$out" 2>/dev/null) || true
    python3 - "$name" "$role" "$protocol" "$out" >> "$ROWS" <<'EOF'
import json, sys
name, role, protocol, path = sys.argv[1:5]
try:
    report = json.load(open(path))
except Exception as e:
    print(f"{name}\t{role}\t{protocol}\tno report ({e.__class__.__name__})")
    sys.exit(0)
cells = []
for level in ["MUST", "CAPABILITY", "SHOULD", "INFO"]:
    c = report["levels"][level]
    cells.append(f"{c['pass']}/{c['fail']}/{c['skip']}/{c['blocked']}")
print("\t".join([name, role, protocol, f"{report['verdict']} ({report['exit']})"] + cells))
EOF
}

HIST=$WORK/history
run '`acp agent`' agent 1 1 "$ACP" agent --quiet
run '`acp agent --history DIR`' agent 1 1 "$ACP" agent --quiet --history "$HIST"
run '`acp agent --protocol 2`' agent 2 1 "$ACP" agent --protocol 2 --quiet
run 'TypeScript SDK agent (`interop/agent.mjs`)' agent 1 "$(have_node && echo 1 || echo 0)" node "$ROOT/interop/agent.mjs"
run 'Python SDK agent (`interop/python/check_agent.py`)' agent 1 "$(have_python && echo 1 || echo 0)" "$PY" "$ROOT/interop/python/check_agent.py"
run 'Rust SDK example `simple_agent`' agent 1 "$HAVE_SDK_EXAMPLES" "$ROOT/target/debug/simple_agent"
run 'Rust SDK example `simple_agent_v2`' agent 2 "$HAVE_SDK_EXAMPLES" "$ROOT/target/debug/simple_agent_v2"
run '`acp client --allow -p hi`' client 1 1 "$ACP" client --allow -p hi -- '{agent}'
run '`acp client --protocol 2 --allow -p hi`' client 2 1 "$ACP" client --protocol 2 --allow -p hi -- '{agent}'
run 'TypeScript SDK client (`interop/prompt_client.mjs`)' client 1 "$(have_node && echo 1 || echo 0)" node "$ROOT/interop/prompt_client.mjs" -- '{agent}'
run 'Python SDK client (`interop/python/prompt_client.py`)' client 1 "$(have_python && echo 1 || echo 0)" "$PY" "$ROOT/interop/python/prompt_client.py" -- '{agent}'

PUBLISHED=$WORK/published.tsv
: > "$PUBLISHED"
if [[ -n "${SCORECARD_AGENTS:-}" ]]; then
    IFS='|' read -r -a entries <<< "$SCORECARD_AGENTS"
    for entry in "${entries[@]}"; do
        name=${entry%%=*}
        read -r -a cmd <<< "${entry#*=}"
        before=$(wc -l < "$ROWS")
        run "$name (published)" agent 1 1 "${cmd[@]}"
        if [[ "${SCORECARD_README_AGENTS:-0}" != 1 ]]; then
            tail -n +$((before + 1)) "$ROWS" >> "$PUBLISHED"
            head -n "$before" "$ROWS" > "$WORK/kept" && mv "$WORK/kept" "$ROWS"
        fi
    done
fi

table() {
    echo "| peer | role | protocol | verdict (exit) | MUST | CAPABILITY | SHOULD | INFO |"
    echo "|---|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r name role protocol verdict must cap should info; do
        echo "| $name | $role | v$protocol | $verdict | ${must:-} | ${cap:-} | ${should:-} | ${info:-} |"
    done < "$1"
}

TABLE=$WORK/table.md
{
    echo "<!-- scorecard:begin (tools/scorecard.sh; cells: pass/fail/skip/blocked) -->"
    table "$ROWS"
    echo
    echo "$(date -u +%Y-%m-%d), acp-rs $(git rev-parse --short HEAD), $(uname -srm)."
    echo "<!-- scorecard:end -->"
} > "$TABLE"

if [[ $PRINT == 1 ]]; then
    cat "$TABLE"
else
    python3 - "$TABLE" README.md <<'EOF'
import re, sys
table, readme = open(sys.argv[1]).read(), open(sys.argv[2]).read()
pattern = re.compile(r"<!-- scorecard:begin.*?<!-- scorecard:end -->\n", re.S)
if not pattern.search(readme):
    sys.exit("README.md has no scorecard markers")
open(sys.argv[2], "w").write(pattern.sub(lambda _: table, readme, count=1))
EOF
    echo "scorecard: README.md updated" >&2
fi
if [[ -s "$PUBLISHED" ]]; then
    echo
    echo "Published agents (not written into the README):"
    table "$PUBLISHED"
fi
