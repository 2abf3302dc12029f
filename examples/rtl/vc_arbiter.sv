// The bank arbiter's round robin over the five VCs of one RC Link TX, as the node `tx.arbiter`
// (modules/src/rclink/vc_arbiter.rs) models it: a request names the VCs whose queue holds a frame
// the rate gate and CBFC let go (`req_eligible`, bit v: VC v); in the same cycle the grant names
// the first of them from the pointer, and the VCs looked at (from the pointer up to the grant,
// all five when none is eligible). Pointer and counter move only after a grant: a grant from
// another VC than the pointer's takes the turn there; a VC's turn ends after W<vc> grants.
//
// Timing: the grant is combinational from the request and the registers. The model shows the
// pointer and counter after the grant in the grant's cycle; here that is `ptr_d` / `counter_d`
// (the next state), and `ptr` / `counter` (the registers) show it one cycle later.
//
// A worked example for `hwsim diff` (examples/rtl/run.sh), not a production block.
// PLANT_BUG = 1 plants the classic round-robin off-by-one for the run.sh demonstration: the
// search starts at the VC after the pointer, so the pointer's own VC is looked at last.
module vc_arbiter #(
    parameter int W0 = 1, W1 = 1, W2 = 1, W3 = 1, W4 = 256,
    parameter int PLANT_BUG = 0
) (
    input  logic       clk,
    input  logic       rst,
    input  logic       req_valid,
    input  logic [4:0] req_eligible,
    output logic       grant_valid,
    output logic       grant_granted,
    output logic [2:0] grant_vc,
    output logic [4:0] grant_visited,
    output logic [2:0] ptr,
    output logic [8:0] counter
);
    localparam int NVC = 5;

    function automatic int weight(input logic [2:0] vc);
        case (vc)
            3'd0: weight = W0;
            3'd1: weight = W1;
            3'd2: weight = W2;
            3'd3: weight = W3;
            default: weight = W4;
        endcase
    endfunction

    function automatic logic [2:0] wrap(input int v);
        wrap = 3'(v % NVC);
    endfunction

    // The first eligible VC from the pointer, and the VCs visited up to it.
    always_comb begin
        logic found;
        logic [2:0] vc;
        found = 1'b0;
        vc = 3'd0;
        grant_vc = 3'd0;
        grant_visited = 5'd0;
        for (int k = 0; k < NVC; k++) begin
            vc = wrap(int'(ptr) + k + (PLANT_BUG != 0 ? 1 : 0));
            if (!found) begin
                grant_visited[vc] = 1'b1;
                if (req_eligible[vc]) begin
                    found = 1'b1;
                    grant_vc = vc;
                end
            end
        end
        grant_granted = found;
        grant_valid = req_valid;
    end

    // The pointer rule after a send from grant_vc.
    logic [2:0] ptr_d;
    logic [8:0] counter_d;
    always_comb begin
        logic [8:0] c;
        c = 9'd0;
        ptr_d = ptr;
        counter_d = counter;
        if (req_valid && grant_granted) begin
            c = (grant_vc == ptr) ? counter + 9'd1 : 9'd1;
            if (int'(c) >= weight(grant_vc)) begin
                ptr_d = wrap(int'(grant_vc) + 1);
                counter_d = 9'd0;
            end else begin
                ptr_d = grant_vc;
                counter_d = c;
            end
        end
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            ptr <= 3'd0;
            counter <= 9'd0;
        end else begin
            ptr <= ptr_d;
            counter <= counter_d;
        end
    end
endmodule
