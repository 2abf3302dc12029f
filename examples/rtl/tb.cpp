// Verilator testbench for bank_arbiter.sv: replays the per-cycle input values that
// `hwsim vectors` wrote (arb.csv) and dumps a VCD that `hwsim diff` compares with the model's.
//
// Cycle c of the CSV is applied in [c*10, c*10+10) ns; the clock rises at c*10 ns (the edge that
// ends cycle c-1), so the registers seen at time c*10 are the model's values of cycle c.
// Usage: tb ARB.csv OUT.vcd
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "Vbank_arbiter.h"
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
        std::fprintf(stderr, "usage: %s ARB.csv OUT.vcd\n", argv[0]);
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
    const char* needed[] = {"req.valid", "req.tag", "req.dst", "req.qp", "req.cost",
                            "credit.valid", "credit.src", "credit.vc", "credit.credits"};
    for (const char* n : needed) {
        if (!col.count(n)) {
            std::fprintf(stderr, "%s: no column %s\n", argv[1], n);
            return 2;
        }
    }
    std::vector<std::vector<unsigned long>> rows;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::vector<unsigned long> r;
        for (const std::string& c : split(line)) r.push_back(std::strtoul(c.c_str(), nullptr, 10));
        rows.push_back(r);
    }

    VerilatedContext ctx;
    ctx.traceEverOn(true);
    Vbank_arbiter top(&ctx);
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
    for (size_t c = 0; c < rows.size(); c++) {
        const std::vector<unsigned long>& r = rows[c];
        if (c > 0) {
            top.clk = 1;  // the edge that takes row c-1's inputs
            top.eval();
        }
        top.req_valid = r[col["req.valid"]];
        top.req_tag = r[col["req.tag"]];
        top.req_dst = r[col["req.dst"]];
        top.req_qp = r[col["req.qp"]];
        top.req_cost = r[col["req.cost"]];
        top.credit_valid = r[col["credit.valid"]];
        top.credit_src = r[col["credit.src"]];
        top.credit_vc = r[col["credit.vc"]];
        top.credit_credits = r[col["credit.credits"]];
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
