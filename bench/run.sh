#!/usr/bin/env bash
# Runs every configuration × workload of shared/bench/WORKLOADS.md, interleaved, and prints a
# table of medians.
#
#   bench/run.sh                 # 5 repetitions (REPS=5), release build first
#   REPS=3 bench/run.sh          # fewer repetitions
#   CONFIGS="tokio-stdio core-direct" WORKLOADS="w1" bench/run.sh
#
# Rep r runs W0 (the core beside serde_json, and the pipe floor), then W1 for every config,
# W2 for every config (and `floor`, W2 only: the stdio round trip's floor, one 120-byte line
# ping-ponged over pipes without a protocol), W3 for every config, then W1 with U = 200 000 for the stdio configs
# (does the agent's peak RSS grow with U?). With Node and interop/node_modules present, the
# config `ts-agent` (our tokio client driving the official TypeScript SDK's agent,
# bench/ts-agent.mjs) joins every stdio round: a same-machine reference.
#
# Raw METRIC lines go to bench/out/<UTC time>/; the table to stdout and
# bench/out/<UTC time>/table.md.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
CONFIGS=${CONFIGS:-"floor tokio-stdio blocking-stdio tokio-duplex tokio-ws tokio-http core-direct"}
WORKLOADS=${WORKLOADS:-"w1 w2 w3"}
TIMEOUT=${TIMEOUT:-300}

cargo build --release -q -p acp-bench
BIN=$PWD/target/release/acp-bench
if [[ -z "${NO_TS:-}" ]] && command -v node >/dev/null && [[ -d interop/node_modules/@agentclientprotocol/sdk ]]; then
    CONFIGS="$CONFIGS ts-agent"
fi

OUT=bench/out/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
echo "# acp-bench: $REPS reps of [$CONFIGS] x [$WORKLOADS] -> $OUT" >&2
{
    echo "host: $(uname -srm), $(nproc) cpus, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    echo "cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
    echo "rustc: $(rustc --version)"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"

# run NAME ARGS...: one client run, its METRIC lines saved as NAME.txt (a failure is recorded).
run() {
    local name=$1
    shift
    if ! timeout "$TIMEOUT" "$BIN" client "$@" > "$OUT/$name.txt" 2> "$OUT/$name.err"; then
        echo "  $name FAILED (see $OUT/$name.err)" >&2
        echo "FAILED" >> "$OUT/$name.txt"
    fi
}

client_args() { # config -> client arguments
    case $1 in
        ts-agent) echo "--config tokio-stdio -- node bench/ts-agent.mjs" ;;
        *) echo "--config $1" ;;
    esac
}

stdio() { [[ $1 == *-stdio || $1 == ts-agent ]]; }

for rep in $(seq 1 "$REPS"); do
    echo "rep $rep/$REPS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    "$BIN" w0 > "$OUT/r$rep-w0.txt"
    "$BIN" floor >> "$OUT/r$rep-w0.txt"
    for w in $WORKLOADS; do
        for c in $CONFIGS; do
            [[ $c == floor && $w != w2 ]] && continue
            # shellcheck disable=SC2046
            run "r$rep-$c-$w" --workload "$w" $(client_args "$c")
        done
    done
    for c in $CONFIGS; do
        stdio "$c" || continue
        # shellcheck disable=SC2046
        run "r$rep-$c-w1u200k" --workload w1 --updates 200000 $(client_args "$c")
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

# median FILES... METRIC: the median of METRIC over the files (lower middle for even counts).
median() {
    local metric=${*: -1}
    local files=("${@:1:$#-1}")
    { cat "${files[@]}" 2>/dev/null || true; } | awk -v m="$metric" -F'[= ]' '$1=="METRIC" && $2==m {print $3}' |
        sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "-"}'
}

fmt() { # number -> rounded with thousands separators
    awk -v x="$1" 'BEGIN { if (x == "-") { print "-"; exit } s = sprintf("%.0f", x); n = ""; while (length(s) > 3) { n = "," substr(s, length(s)-2) n; s = substr(s, 1, length(s)-3) } print s n }'
}

fmt1() { awk -v x="$1" 'BEGIN { if (x == "-") print "-"; else printf "%.1f", x }'; }

mib() { awk -v x="$1" 'BEGIN { if (x == "-") print "-"; else printf "%.1f", x / 1024 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print "-"; else printf "%.1f×", a / b }'; }

# per_rep CONFIG BASE WORKLOAD METRIC: median over reps of CONFIG's METRIC / BASE's METRIC in
# the same rep (WORKLOADS.md: ratios per repetition, then the median).
per_rep() {
    for rep in $(seq 1 "$REPS"); do
        local a b
        a=$(median "$OUT/r$rep-$1-$3.txt" "$4")
        b=$(median "$OUT/r$rep-$2-$3.txt" "$4")
        [[ $a == - || $b == - ]] || awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", a / b }'
    done | sort -g | awk '{v[NR]=$1} END {if (NR) printf "%.2f×\n", v[int((NR+1)/2)]; else print "-"}'
}

# same_machine CONFIG WORKLOAD METRIC: CONFIG over ts-agent, per rep.
same_machine() {
    [[ " $CONFIGS " == *" ts-agent "* ]] || { echo "-"; return; }
    per_rep "$1" ts-agent "$2" "$3"
}

files() { # config workload -> the files of every rep
    local f=()
    for rep in $(seq 1 "$REPS"); do f+=("$OUT/r$rep-$1-$2.txt"); done
    echo "${f[@]}"
}

{
    echo "Medians of $REPS interleaved repetitions ($(date -u +%Y-%m-%d), $(nproc) cpus, load before/after: $(sed -n 's/load before: //p' "$OUT/machine.txt") / $(sed -n 's/load after: //p' "$OUT/machine.txt"))."
    echo "Ratios are to the official Rust SDK's figures on the reference VM (WORKLOADS.md): W1 20,000 updates/s, W2 6,000 round trips/s, W3 19,500 frames/s."
    echo
    echo "| config | W1 updates/s | × SDK | agent peak RSS U=100k / 200k (MiB) | W2 round trips/s | × SDK | W2 p50 / p99 (µs) | W3 frames/s | × SDK | W3 prompts/s |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for c in $CONFIGS; do
        # shellcheck disable=SC2046
        w1=$(median $(files "$c" w1) w1_updates_per_s)
        # shellcheck disable=SC2046
        w2=$(median $(files "$c" w2) w2_rtt_per_s)
        # shellcheck disable=SC2046
        p50=$(median $(files "$c" w2) w2_p50_us)
        # shellcheck disable=SC2046
        p99=$(median $(files "$c" w2) w2_p99_us)
        # shellcheck disable=SC2046
        w3=$(median $(files "$c" w3) w3_frames_per_s)
        # shellcheck disable=SC2046
        w3p=$(median $(files "$c" w3) w3_prompts_per_s)
        rss="-"
        if stdio "$c"; then
            # shellcheck disable=SC2046
            rss="$(mib "$(median $(files "$c" w1) agent_peak_rss_kb)") / $(mib "$(median $(files "$c" w1u200k) agent_peak_rss_kb)")"
        fi
        echo "| $c | $(fmt "$w1") | $(ratio "$w1" 20000) | $rss | $(fmt "$w2") | $(ratio "$w2" 6000) | $(fmt1 "$p50") / $(fmt1 "$p99") | $(fmt "$w3") | $(ratio "$w3" 19500) | $(fmt "$w3p") |"
    done
    if [[ " $CONFIGS " == *" floor "* && " $WORKLOADS " == *" w2 "* ]]; then
        echo
        echo "W2 over the pipe floor of the same rep (median of per-rep ratios):"
        echo
        echo "| config | p50 × floor | p99 × floor | round trips/s × floor |"
        echo "|---|---:|---:|---:|"
        for c in $CONFIGS; do
            [[ $c == floor ]] && continue
            echo "| $c | $(per_rep "$c" floor w2 w2_p50_us) | $(per_rep "$c" floor w2 w2_p99_us) | $(per_rep "$c" floor w2 w2_rtt_per_s) |"
        done
    fi
    if [[ " $CONFIGS " == *" ts-agent "* ]]; then
        echo
        echo "Same machine, same client: each config over \`ts-agent\` (the official TypeScript SDK's agent driven by our tokio client), median of per-rep ratios:"
        echo
        echo "| config | W1 | W2 | W3 |"
        echo "|---|---:|---:|---:|"
        for c in $CONFIGS; do
            [[ $c == ts-agent ]] && continue
            echo "| $c | $(same_machine "$c" w1 w1_updates_per_s) | $(same_machine "$c" w2 w2_rtt_per_s) | $(same_machine "$c" w3 w3_frames_per_s) |"
        done
    fi
    echo
    echo "W0, ns per message (median of the per-rep medians):"
    echo
    echo "| phase | ns/msg |"
    echo "|---|---:|"
    w0files=()
    for rep in $(seq 1 "$REPS"); do w0files+=("$OUT/r$rep-w0.txt"); done
    for p in parse_value parse_typed parse_tagged ser_value ser_typed typed_roundtrip core_decode core_decode_general core_encode core_roundtrip pipe_unbuffered pipe_buffered; do
        echo "| $p | $(fmt1 "$(median "${w0files[@]}" "w0_${p}_ns_per_msg")") |"
    done
    echo
    echo "W0 ratio core_roundtrip / typed_roundtrip: $(median "${w0files[@]}" w0_core_vs_typed_ratio) (median of per-rep ratios)"
    failed=$(grep -l FAILED "$OUT"/*.txt 2>/dev/null | wc -l)
    [[ $failed == 0 ]] || echo "**$failed runs failed** (see $OUT/*.err)"
} | tee "$OUT/table.md"
