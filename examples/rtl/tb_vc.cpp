// Verilator testbench for vc_arbiter.sv: replays the request that `hwsim vectors --instance
// chip0.lg7.tx.arbiter` wrote out of a system run (chip0.lg7.tx.arbiter.csv) and dumps a VCD
// that `hwsim diff` compares with the model's wave of the same run.
//
// Cycle c of the CSV is applied in [c*10, c*10+10) ns; the clock rises at c*10 ns (the edge that
// ends cycle c-1), then row c's request is applied, so the combinational grant seen at time c*10
// is the model's grant of cycle c, and the registers (ptr, counter) hold the model's values of
// cycle c-1 (map_vc.yaml: offset 1).
// Usage: tb_vc ARBITER.csv OUT.vcd
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "Vvc_arbiter.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) out.push_back(cell);
    return out;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s ARBITER.csv OUT.vcd\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::string line;
    if (!in || !std::getline(in, line)) {
        std::fprintf(stderr, "%s: cannot read the header\n", argv[1]);
        return 2;
    }
    // Header cells are NAME:WIDTH:DIR; keep the input columns by name.
    std::map<std::string, size_t> col;
    std::vector<std::string> head = split(line);
    for (size_t i = 0; i < head.size(); i++) col[head[i].substr(0, head[i].find(':'))] = i;
    for (const char* n : {"req.valid", "req.eligible"}) {
        if (!col.count(n)) {
            std::fprintf(stderr, "%s: no column %s\n", argv[1], n);
            return 2;
        }
    }
    const size_t cv = col["req.valid"], ce = col["req.eligible"];

    VerilatedContext ctx;
    ctx.traceEverOn(true);
    Vvc_arbiter top(&ctx);
    VerilatedVcdC vcd;
    top.trace(&vcd, 99);
    // Reset before time 0 (not dumped).
    top.rst = 1;
    top.clk = 0;
    top.eval();
    top.clk = 1;
    top.eval();
    top.clk = 0;
    top.rst = 0;
    top.eval();
    vcd.open(argv[2]);
    // Rows are applied as they are read (a system run has one per cycle).
    for (unsigned long c = 0; std::getline(in, line); c++) {
        if (line.empty()) continue;
        std::vector<std::string> r = split(line);
        if (r.size() != head.size()) {
            std::fprintf(stderr, "%s: row of cycle %lu has %zu cells, the header %zu\n", argv[1], c, r.size(),
                         head.size());
            return 2;
        }
        if (c > 0) {
            top.clk = 1;  // the edge that takes row c-1's request
            top.eval();
        }
        top.req_valid = std::strtoul(r[cv].c_str(), nullptr, 10);
        top.req_eligible = std::strtoul(r[ce].c_str(), nullptr, 10);
        top.eval();
        vcd.dump(c * 10);
        top.clk = 0;
        top.eval();
        vcd.dump(c * 10 + 5);
    }
    vcd.close();
    top.final();
    return 0;
}
