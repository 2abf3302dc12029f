// The CBFC controller of one RC Link LG, TX side, as the node `tx.cbfc`
// (modules/src/rclink/cbfc/) models it for TYPE1: one credit ledger per (destination, VC)
// bank, the receivers' credit returns added back, each grant's charge taken off, and every
// changed ledger's count told to the TX's VC queues (seed 000 «CBFC 流控», seed 002
// «CBFC 详细行为»). TYPE2 ledgers and the advanced switches are left out: go_back_n sends no
// multicast and sets none of them.
//
// Timing, the kernel's contract (docs/modules.md, «Checking an RTL implementation»):
// - `credit_*` is a return in the cycle the node takes it (a registered input of the node: the
//   MAC's push of cycle n, taken at n + 1; hwsim hands it to the RTL at n + 1). The ledger's new
//   count shows on `counts_*` combinationally, for the VC queues' round of that cycle.
// - `charge_*` is combinational: the grant's charge comes later in the same cycle. The charged
//   ledger's count is registered: it shows on `charged_*` from the next cycle, when the next
//   round reads it. A return and a charge on the same ledger in one cycle both count.
// - `d1_vc*` are destination 1's four ledgers, registers (the model shows them after the
//   cycle's changes; here they show one cycle later).
//
// PLANT_BUG = 1 plants a missing bypass: `counts_credits` shows the ledger's register, not the
// count after this cycle's return, so the VC queues' round of the return's cycle sees the
// credit one cycle late (the ledger itself is right). The first return of go_back_n shows it.
// A worked example, not a production block.
module cbfc #(
    parameter int DSTS = 16,
    parameter int INITIAL = 1024,
    parameter int PLANT_BUG = 0
) (
    input  logic        clk,
    input  logic        rst,
    // A return from a receiver: `src` is the ledger's destination.
    input  logic        credit_valid,
    input  logic [15:0] credit_src,
    input  logic [2:0]  credit_vc,
    input  logic [14:0] credit_credits,
    // A grant's charge.
    input  logic        charge_valid,
    input  logic [15:0] charge_dst,
    input  logic [2:0]  charge_vc,
    input  logic [14:0] charge_credits,
    // The count after this cycle's return.
    output logic        counts_valid,
    output logic [15:0] counts_dst,
    output logic [2:0]  counts_vc,
    output logic [14:0] counts_credits,
    // The count after the last cycle's charge.
    output logic        charged_valid,
    output logic [15:0] charged_dst,
    output logic [2:0]  charged_vc,
    output logic [14:0] charged_credits,
    output logic [14:0] d1_vc0,
    output logic [14:0] d1_vc1,
    output logic [14:0] d1_vc2,
    output logic [14:0] d1_vc3
);
    localparam int IW = $clog2(DSTS);

    logic [14:0] ledger[DSTS][4];

    // The return, as taken this cycle.
    logic        ret_valid;
    logic [15:0] ret_src;
    logic [1:0]  ret_vc;
    logic [14:0] ret_credits;
    assign ret_valid = credit_valid;
    assign ret_src = credit_src;
    assign ret_vc = credit_vc[1:0];
    assign ret_credits = credit_credits;

    // The returned ledger's count, this cycle.
    logic [IW-1:0] ret_i;
    logic [14:0]   ret_count;
    assign ret_i = ret_src[IW-1:0];
    assign ret_count = ledger[ret_i][ret_vc] + ret_credits;
    assign counts_valid = ret_valid;
    assign counts_dst = ret_src;
    assign counts_vc = {1'b0, ret_vc};
    assign counts_credits = PLANT_BUG != 0 ? ledger[ret_i][ret_vc] : ret_count;

    // The charged ledger's count: after this cycle's return when it is the same ledger.
    logic [IW-1:0] chg_i;
    logic          same;
    logic [14:0]   before_charge;
    logic [14:0]   chg_count;
    assign chg_i = charge_dst[IW-1:0];
    assign same = ret_valid && ret_i == chg_i && ret_vc == charge_vc[1:0];
    assign before_charge = same ? ret_count : ledger[chg_i][charge_vc[1:0]];
    assign chg_count = before_charge - charge_credits;

    always_ff @(posedge clk) begin
        if (rst) begin
            for (int d = 0; d < DSTS; d++) begin
                for (int v = 0; v < 4; v++) begin
                    ledger[d][v] <= 15'(INITIAL);
                end
            end
            charged_valid <= 1'b0;
            charged_dst <= '0;
            charged_vc <= '0;
            charged_credits <= '0;
        end else begin
            if (ret_valid) begin
                ledger[ret_i][ret_vc] <= ret_count;
            end
            // The charge writes after the return: for the same ledger it holds both.
            if (charge_valid) begin
                ledger[chg_i][charge_vc[1:0]] <= chg_count;
            end
            charged_valid <= charge_valid;
            if (charge_valid) begin
                charged_dst <= charge_dst;
                charged_vc <= charge_vc;
                charged_credits <= chg_count;
            end
        end
    end

    assign d1_vc0 = ledger[1][0];
    assign d1_vc1 = ledger[1][1];
    assign d1_vc2 = ledger[1][2];
    assign d1_vc3 = ledger[1][3];
endmodule
