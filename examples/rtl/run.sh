#!/usr/bin/env bash
# Cross-checks RTL against the model, end to end, twice.
#
# A. A module testbench: the SystemVerilog bank arbiter (bank_arbiter.sv) against the model:
#   1. hwsim vectors: the model's per-cycle port values for tb/modules/bank_arbiter_flow_blocking.yaml
#   2. hwsim run --vcd: the model's wave
#   3. Verilator builds the RTL twice (as written, and with PLANT_BUG=1) with tb.cpp, which
#      replays the vectors' inputs and dumps a VCD
#   4. hwsim diff --map map.yaml: the RTL must agree with the model (exit 0), and the planted bug
#      must be caught at its first divergence, cycle 3 on arb.ptr (exit 1).
# A2. The same RTL on tb/modules/bank_arbiter_credit_boundary.yaml, which grants at exactly
#    remaining == cost + uf_limit: PLANT_BUG=2 (the credit gate's `>` for `>=`) must be caught
#    at cycle 3 on arb.grant.valid.
# B. A system scenario: the arbiter node of chip0's LG 7 (vc_arbiter.sv against the node
#    `chip0.lg7.tx.arbiter`) through the Go-Back-N story of tb/go_back_n.yaml:
#   1. hwsim vectors --instance chip0.lg7.tx.arbiter: the node's ports, cycle by cycle, as the
#      system drove them (the requests through the drop, the NAK and the resend)
#   2. hwsim run --vcd: the model's wave of the same run
#   3. Verilator builds vc_arbiter.sv twice (PLANT_BUG 0 and 1) with tb_vc.cpp
#   4. hwsim diff --map map_vc.yaml: SAME for the RTL as written; the planted off-by-one caught
#      at the first request (cycle 21, on grant.visited).
# Exits non-zero if any expectation fails. Without verilator on PATH it says so and skips
# (exit 0); .ci/run installs it first.
# Outputs go to waves/rtl/ (ignored by git), or $OUT.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${OUT:-$ROOT/waves/rtl}"
TB="$ROOT/tb/modules/bank_arbiter_flow_blocking.yaml"
EXPECT_BUG="first divergence at cycle 3 on arb.ptr"

if ! command -v verilator >/dev/null 2>&1; then
    echo "examples/rtl/run.sh: SKIP: verilator is not installed (Debian: apt-get install verilator)"
    exit 0
fi
if [ -z "${HWSIM:-}" ]; then
    (cd "$ROOT" && cargo build --release --quiet --bin hwsim)
    HWSIM="${CARGO_TARGET_DIR:-$ROOT/target}/release/hwsim"
fi
mkdir -p "$OUT"

build() { # build TOP TBCPP NAME PLANT_BUG [EXTRA_FLAGS]: obj_NAME/TBCPP-stem
    local top=$1 cpp=$2 name=$3 bug=$4 extra=${5:-}
    # shellcheck disable=SC2086
    verilator --cc --exe --build -j 2 --trace --timescale 1ns/1ns -Wall -Wno-DECLFILENAME $extra \
        -GPLANT_BUG="$bug" --top-module "$top" -Mdir "$OUT/obj_$name" \
        -o tb "$HERE/$top.sv" "$HERE/$cpp" >"$OUT/build_$name.log" 2>&1 ||
        { cat "$OUT/build_$name.log"; echo "examples/rtl/run.sh: FAIL: verilator build ($name)"; exit 1; }
}

# expect MODEL RTL RTL_BUG MAP STEM EXPECT: the RTL as written agrees with the model (diff exit
# 0), the planted bug is reported as EXPECT (exit 1); the reports go to STEM.txt, STEM_bug.txt.
expect() {
    local model=$1 good=$2 bug=$3 map=$4 stem=$5 want=$6 status=0
    "$HWSIM" diff "$model" "$good" --map "$map" >"$stem.txt" || status=$?
    cat "$stem.txt"
    if [ "$status" -ne 0 ]; then
        echo "examples/rtl/run.sh: FAIL: the RTL disagrees with the model ($good; hwsim diff exit $status)"
        exit 1
    fi
    status=0
    "$HWSIM" diff "$model" "$bug" --map "$map" >"${stem}_bug.txt" || status=$?
    cat "${stem}_bug.txt"
    if [ "$status" -ne 1 ] || ! grep -q "$want" "${stem}_bug.txt"; then
        echo "examples/rtl/run.sh: FAIL: the planted bug was not reported as \"$want\" (exit $status)"
        exit 1
    fi
}

# A. The bank arbiter's module testbench.
"$HWSIM" vectors "$TB" --out "$OUT"
"$HWSIM" run "$TB" --vcd "$OUT/model.vcd" -q
build bank_arbiter tb.cpp good 0 -Wno-UNUSEDSIGNAL
build bank_arbiter tb.cpp bug 1 -Wno-UNUSEDSIGNAL
"$OUT/obj_good/tb" "$OUT/arb.csv" "$OUT/rtl.vcd"
"$OUT/obj_bug/tb" "$OUT/arb.csv" "$OUT/rtl_bug.vcd"
expect "$OUT/model.vcd" "$OUT/rtl.vcd" "$OUT/rtl_bug.vcd" "$HERE/map.yaml" "$OUT/diff" "$EXPECT_BUG"
echo "examples/rtl/run.sh: A: PASS: the RTL agrees with the model; the planted bug is caught ($EXPECT_BUG)"

# A2. The CBFC gate at its boundary (remaining == cost + uf_limit): the off-by-one `>` for `>=`
#     (PLANT_BUG=2) agrees with the model on flow_blocking's stimulus and must be caught here.
TB2="$ROOT/tb/modules/bank_arbiter_credit_boundary.yaml"
OUT2="$OUT/boundary"
EXPECT_BUG2="first divergence at cycle 3 on arb.grant.valid"
mkdir -p "$OUT2"
"$HWSIM" vectors "$TB2" --out "$OUT2"
"$HWSIM" run "$TB2" --vcd "$OUT2/model.vcd" -q
build bank_arbiter tb.cpp bug2 2 -Wno-UNUSEDSIGNAL
"$OUT/obj_good/tb" "$OUT2/arb.csv" "$OUT2/rtl.vcd"
"$OUT/obj_bug2/tb" "$OUT2/arb.csv" "$OUT2/rtl_bug2.vcd"
expect "$OUT2/model.vcd" "$OUT2/rtl.vcd" "$OUT2/rtl_bug2.vcd" "$HERE/map.yaml" "$OUT2/diff" "$EXPECT_BUG2"
echo "examples/rtl/run.sh: A2: PASS: the RTL agrees at the credit boundary; the off-by-one is caught ($EXPECT_BUG2)"

# B. The arbiter node inside a system run.
SYS="$ROOT/tb/go_back_n.yaml"
NODE=chip0.lg7.tx.arbiter
EXPECT_SYS_BUG="first divergence at cycle 21 on $NODE.grant.visited"
"$HWSIM" vectors "$SYS" --instance "$NODE" --out "$OUT"
"$HWSIM" run "$SYS" --vcd "$OUT/gbn_model.vcd" -q
build vc_arbiter tb_vc.cpp vc_good 0
build vc_arbiter tb_vc.cpp vc_bug 1
"$OUT/obj_vc_good/tb" "$OUT/$NODE.csv" "$OUT/gbn_rtl.vcd"
"$OUT/obj_vc_bug/tb" "$OUT/$NODE.csv" "$OUT/gbn_rtl_bug.vcd"
expect "$OUT/gbn_model.vcd" "$OUT/gbn_rtl.vcd" "$OUT/gbn_rtl_bug.vcd" "$HERE/map_vc.yaml" "$OUT/gbn_diff" "$EXPECT_SYS_BUG"
echo "examples/rtl/run.sh: B: PASS: vc_arbiter.sv agrees with $NODE through the Go-Back-N story; the planted bug is caught ($EXPECT_SYS_BUG)"
