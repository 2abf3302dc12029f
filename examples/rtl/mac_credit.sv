// The MAC credit of one RC Link LG, TX side, as the node `tx.mac_credit`
// (modules/src/rclink/mac_credit.rs) models it: the MAC2TX credit counter that gates the bank
// arbiter and the multicast MAC TX credit counter that gates TYPE2 frames (seed 000
// «打包延迟与 MAC Credit», seed 002 «多播双重流控»).
//
// Timing: a return from the MAC (`credit_valid`, `credit_mul` for a TYPE2 frame's) counts in its
// own cycle: `available` is combinational from it, so the arbiter's round of that cycle may use
// it. The grant's take (`take_valid`, `take_mul`) comes later in the same cycle and is registered:
// the decrement shows from the next cycle. In the model these are the node's two processes
// (process 0 the returns and the counts, process 1 the take); replaced by this RTL, hwsim
// evaluates it at each (tb/rtl/gbn_mac_credit_replace.yaml).
//
// PLANT_BUG = 1 plants the classic up/down counter bug: in a cycle with both a return and a
// take only the return counts, so a credit is made out of nothing each time the round spends
// a credit in the cycle it comes back (which the MAC's credit lead makes the usual case).
// A worked example, not a production block.
module mac_credit #(
    parameter int CREDITS = 1,
    parameter int MUL_CREDITS = 4,
    parameter int PLANT_BUG = 0
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       credit_valid,
    input  logic       credit_mul,
    input  logic       take_valid,
    input  logic       take_mul,
    output logic [3:0] available,
    output logic [7:0] mul_available
);
    logic [3:0] count;
    logic [7:0] mul_count;

    assign available = count + {3'b0, credit_valid};
    assign mul_available = mul_count + {7'b0, credit_valid & credit_mul};

    always_ff @(posedge clk) begin
        if (rst) begin
            count <= 4'(CREDITS);
            mul_count <= 8'(MUL_CREDITS);
        end else if (PLANT_BUG != 0 && credit_valid) begin
            count <= available;
            mul_count <= mul_available;
        end else begin
            count <= available - {3'b0, take_valid};
            mul_count <= mul_available - {7'b0, take_valid & take_mul};
        end
    end
endmodule
