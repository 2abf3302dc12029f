#!/usr/bin/env bash
# The scaling table of docs/performance.md and the README: wall time and peak memory of one
# system run against the chip count, for a full mesh and a leaf/spine fabric.
#
# Workload: all-to-all, every chip offering 8 MiB split evenly over all the others (so each
# chip has more to send than its 400 B/ns port carries in the window, whatever the chip
# count), cut at 20 µs of simulated time (`until: 20000`). The run is cut while traffic is
# still pending, so its verdict is not the point (the monitor "work finished" fails): the table
# reports the wall time of the simulation loop (`--stats`), of the whole process (elaboration,
# run, checks and report; /usr/bin/time), the peak resident memory and the bytes delivered in
# the window.
#
#   benches/scaling.sh [HWSIM] [CHIPS...]     e.g. benches/scaling.sh target/release/hwsim 2 8 16
#
# HWSIM defaults to target/release/hwsim (or $CARGO_TARGET_DIR/release/hwsim); CHIPS to
# 2 8 16 64 256. Leaf/spine: max(2, N/16) leaves and half as many spines (at least 1).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
hwsim=${1:-${CARGO_TARGET_DIR:-$root/target}/release/hwsim}
shift || true
chips=("$@")
[ ${#chips[@]} -gt 0 ] || chips=(2 8 16 64 256)
until=20000
per_chip=$((8 * 1024 * 1024))

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| topology | chips | switches | run wall (s) | process wall (s) | peak RSS (MiB) | delivered in 20 µs (MB) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for kind in mesh leaf_spine; do
    for n in "${chips[@]}"; do
        # Bytes per (src, dst) pair, whole 4 KiB pages.
        bytes=$(( (per_chip / (n - 1) + 4095) / 4096 * 4096 ))
        topo="{kind: mesh, chips: $n}"
        switches=0
        if [ "$kind" = leaf_spine ]; then
            leaves=$(( n / 16 > 2 ? n / 16 : 2 ))
            spines=$(( leaves / 2 > 1 ? leaves / 2 : 1 ))
            topo="{kind: leaf_spine, chips: $n, leaves: $leaves, spines: $spines}"
            switches=$((leaves + spines))
        fi
        tb="$tmp/${kind}_$n.yaml"
        cat > "$tb" <<EOF
name: scaling_${kind}_$n
seed: 1
until: $until
include: [$root/configs/sg2262.yaml]
system:
  chip:
    tx: {rate_control: false}
  topology: $topo
  traffic:
    - {pattern: all_to_all, bytes: $bytes, cdma: 0}
EOF
        # The verdict fails by design (work pending at the cut); a refusal or crash does not.
        if ! /usr/bin/time -v "$hwsim" run "$tb" --stats --json "$tmp/r.json" > "$tmp/out" 2> "$tmp/time"; then
            if ! grep -q '^verdict: FAIL' "$tmp/out"; then
                echo "| $kind | $n | $switches | — | — | — | $(head -c 120 "$tmp/time" | tr '\n' ' ') |"
                continue
            fi
        fi
        wall=$(grep -o 'wall [0-9.]* s' "$tmp/out" | awk '{print $2}')
        rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$tmp/time")
        elapsed=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s}' "$tmp/time")
        delivered=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(round(sum(v for k,v in r['counters'].items() if k.endswith('.rx.rx_payload_bytes')) / 1e6))" "$tmp/r.json")
        echo "| $kind | $n | $switches | $wall | $elapsed | $rss | $delivered |"
    done
done
echo
echo "load: $(uptime | sed 's/.*load average: //')"
