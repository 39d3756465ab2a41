#!/usr/bin/env bash
# Before/after: the workloads of bench/run.sh on a past commit and on the working tree,
# interleaved run by run (rep r runs every config x workload on both builds, alternating which
# goes first), then a table of medians and the change.
#
#   bench/compare.sh cc261ec                    # 5 repetitions
#   REPS=3 CONFIGS="blocking-stdio" WORKLOADS="w2" bench/compare.sh HEAD~3
#
# The config `floor` (W2 only) is the stdio round trip's floor (`acp-bench client --config
# floor`: one 120-byte line ping-ponged over pipes, no protocol). It does not depend on the code
# compared, so it runs once per rep in W2's round, with the after binary (older binaries lack
# it); the table then gives each stdio config's W2 over the floor of the same rep, before and
# after (median of the per-rep ratios).
#
# The past commit is built in a temporary git worktree with its own target directory (a full
# release build), unless BEFORE_BIN names its acp-bench binary already built (each run keeps
# both binaries beside its raw METRIC lines, in bench/out/compare-<UTC time>/). AFTER_BIN
# likewise names the after binary instead of building the working tree: with BEFORE_BIN set to
# the same file, an A/A control that shows this machine's noise.
set -euo pipefail
cd "$(dirname "$0")/.."

REV=${1:?usage: bench/compare.sh REV}
REPS=${REPS:-5}
CONFIGS=${CONFIGS:-"floor tokio-stdio blocking-stdio tokio-duplex core-direct"}
WORKLOADS=${WORKLOADS:-"w1 w2 w3"}
TIMEOUT=${TIMEOUT:-300}

OUT=bench/out/compare-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
if [[ -n "${BEFORE_BIN:-}" ]]; then
    cp "$BEFORE_BIN" "$OUT/acp-bench-before"
else
    WT=$(mktemp -d)
    trap 'git worktree remove --force "$WT/before" >/dev/null 2>&1 || true; rm -rf "$WT"' EXIT
    git worktree add -q --detach "$WT/before" "$REV"
    echo "# building $REV ($(git rev-parse --short "$REV"))" >&2
    (cd "$WT/before" && CARGO_TARGET_DIR="$WT/before/target" cargo build --release -q -p acp-bench)
    cp "$WT/before/target/release/acp-bench" "$OUT/acp-bench-before"
fi
if [[ -n "${AFTER_BIN:-}" ]]; then
    cp "$AFTER_BIN" "$OUT/acp-bench-after"
else
    cargo build --release -q -p acp-bench
    cp target/release/acp-bench "$OUT/acp-bench-after"
fi
{
    echo "before: $REV ($(git rev-parse --short "$REV")); after: working tree at $(git rev-parse --short HEAD)"
    echo "host: $(uname -srm), $(nproc) cpus; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"

run() { # build config workload rep
    local bin="$OUT/acp-bench-$1" file="$OUT/r$4-$1-$2-$3.txt"
    if ! timeout "$TIMEOUT" "$bin" client --config "$2" --workload "$3" > "$file" 2> "${file%.txt}.err"; then
        echo "  $1 $2 $3 FAILED (see ${file%.txt}.err)" >&2
    fi
}

for rep in $(seq 1 "$REPS"); do
    echo "rep $rep/$REPS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    order="before after"
    (( rep % 2 == 0 )) && order="after before"
    for w in $WORKLOADS; do
        for c in $CONFIGS; do
            if [[ $c == floor ]]; then
                [[ $w == w2 ]] && run after floor w2 "$rep"
                continue
            fi
            for b in $order; do run "$b" "$c" "$w" "$rep"; done
        done
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

median() { # metric files...
    local metric=$1
    shift
    { cat "$@" 2>/dev/null || true; } | awk -v m="$metric" -F'[= ]' '$1=="METRIC" && $2==m {print $3}' |
        sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "-"}'
}

metrics() { # workload -> the metrics shown for it
    case $1 in
        w1) echo "w1_updates_per_s agent_peak_rss_kb" ;;
        w2) echo "w2_rtt_per_s w2_p50_us w2_p99_us" ;;
        w3) echo "w3_frames_per_s w3_prompts_per_s" ;;
    esac
}

over_floor() { # build config metric -> median over reps of config's metric / the floor's, same rep
    for rep in $(seq 1 "$REPS"); do
        local a f
        a=$(median "$3" "$OUT/r$rep-$1-$2-w2.txt")
        f=$(median "$3" "$OUT/r$rep-after-floor-w2.txt")
        [[ $a == - || $f == - ]] || awk -v a="$a" -v f="$f" 'BEGIN { printf "%.3f\n", a / f }'
    done | sort -g | awk '{v[NR]=$1} END {if (NR) printf "%.2f×\n", v[int((NR+1)/2)]; else print "-"}'
}

{
    cat "$OUT/machine.txt"
    echo
    echo "Medians of $REPS interleaved repetitions."
    echo
    echo "| config | metric | before | after | change |"
    echo "|---|---|---:|---:|---:|"
    for w in $WORKLOADS; do
        for c in $CONFIGS; do
            [[ $c == floor && $w != w2 ]] && continue
            for m in $(metrics "$w"); do
                b=$(median "$m" "$OUT"/r*-before-"$c"-"$w".txt)
                a=$(median "$m" "$OUT"/r*-after-"$c"-"$w".txt)
                change=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%+.1f%%", (a - b) * 100 / b }')
                echo "| $c | $m | $b | $a | $change |"
            done
        done
    done
    if [[ " $CONFIGS " == *" floor "* && " $WORKLOADS " == *" w2 "* ]]; then
        echo
        echo "W2 over the pipe floor of the same rep (median of per-rep ratios; floor: $(median w2_p50_us "$OUT"/r*-after-floor-w2.txt) / $(median w2_p99_us "$OUT"/r*-after-floor-w2.txt) µs p50 / p99, $(median w2_rtt_per_s "$OUT"/r*-after-floor-w2.txt) round trips/s):"
        echo
        echo "| config | p50 × floor before | after | p99 × floor before | after | round trips/s × floor before | after |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        for c in $CONFIGS; do
            [[ $c == floor ]] && continue
            row="| $c"
            for m in w2_p50_us w2_p99_us w2_rtt_per_s; do
                for b in before after; do row="$row | $(over_floor "$b" "$c" "$m")"; done
            done
            echo "$row |"
        done
    fi
} | tee "$OUT/table.md"
