// Bank arbiter of one RC Link TX, as modules/src/rclink/bank_arbiter.rs models it: five VC
// queues (banks 0..3 by qp & 3, and MUL), a weighted round robin whose pointer and counter move
// only after an actual send, the per-flow rule (an entry goes only if it is the first entry of its
// (dst, qp) flow in its queue), and the CBFC gate (cost 0, or credits >= cost + UF_LIMIT) on
// ledgers per (dst, vc).
//
// Timing is the model's: the request and credit on the inputs in cycle n are taken at the clock
// edge that ends cycle n, and the round runs on the state that includes them; its grant, pointer,
// counter, queue depths and credits are the registers seen in cycle n + 1.
//
// A worked example for `hwsim diff`, not a production block: at most QDEPTH entries per VC and
// NDST destinations (dst 0..NDST-1). For the run.sh demonstration, PLANT_BUG = 1 makes a round
// that grants nothing move the pointer anyway (the mistake the seed's pointer rule forbids), and
// PLANT_BUG = 2 plants the CBFC gate's off-by-one (credits > cost + UF_LIMIT), which only a
// stimulus at the boundary (remaining == cost + UF_LIMIT) can catch.
module bank_arbiter #(
    parameter int NVC = 5,
    parameter int QDEPTH = 8,
    parameter int NDST = 4,
    parameter int INITIAL_CREDITS = 12,
    parameter int UF_LIMIT = 1,
    parameter int W0 = 1, W1 = 1, W2 = 1, W3 = 1, W4 = 256,
    parameter int PLANT_BUG = 0
) (
    input  logic        clk,
    input  logic        rst,
    input  logic        req_valid,
    input  logic [15:0] req_tag,
    input  logic [15:0] req_dst,
    input  logic [9:0]  req_qp,
    input  logic [14:0] req_cost,
    input  logic        credit_valid,
    input  logic [15:0] credit_src,
    input  logic [1:0]  credit_vc,
    input  logic [14:0] credit_credits,
    output logic        grant_valid,
    output logic [15:0] grant_tag,
    output logic [15:0] grant_dst,
    output logic [9:0]  grant_qp,
    output logic [14:0] grant_cost,
    output logic [2:0]  ptr,
    output logic [8:0]  counter,
    output logic [10:0] depth_vc0, depth_vc1, depth_vc2, depth_vc3, depth_vc4,
    // Ledgers of destinations 0..2 as {vc3, vc2, vc1, vc0}, 15 bits each.
    output logic [59:0] credits_d0,
    output logic [59:0] credits_d1,
    output logic [59:0] credits_d2
);
  localparam int QW = $clog2(QDEPTH + 1);
  localparam int IW = $clog2(QDEPTH);

  logic [15:0] q_tag [NVC][QDEPTH];
  logic [15:0] q_dst [NVC][QDEPTH];
  logic [9:0]  q_qp  [NVC][QDEPTH];
  logic [14:0] q_cost[NVC][QDEPTH];
  logic [QW-1:0] q_len [NVC];
  logic [14:0] credits [NDST][4];

  function automatic logic [8:0] weight(input int vc);
    case (vc)
      0: return 9'(W0);
      1: return 9'(W1);
      2: return 9'(W2);
      3: return 9'(W3);
      default: return 9'(W4);
    endcase
  endfunction

  // Next state, computed from the registers and this cycle's inputs.
  logic [15:0] n_tag [NVC][QDEPTH];
  logic [15:0] n_dst [NVC][QDEPTH];
  logic [9:0]  n_qp  [NVC][QDEPTH];
  logic [14:0] n_cost[NVC][QDEPTH];
  logic [QW-1:0] n_len [NVC];
  logic [14:0] n_credits [NDST][4];
  logic        found;
  int          pick_vc, pick_pos;
  logic        head, pass;
  logic [2:0]  n_ptr;
  logic [8:0]  n_counter;
  int          evc, cvc;
  logic [15:0] cur;
  logic [15:0] g_tag, g_dst;
  logic [9:0]  g_qp;
  logic [14:0] g_cost;

  always_comb begin
    n_tag = q_tag;
    n_dst = q_dst;
    n_qp = q_qp;
    n_cost = q_cost;
    n_len = q_len;
    n_credits = credits;
    n_ptr = ptr;
    n_counter = counter;
    found = 0;
    cvc = 0;
    evc = 0;
    cur = 0;
    head = 0;
    pass = 0;
    g_tag = 0;
    g_dst = 0;
    g_qp = 0;
    g_cost = 0;
    pick_vc = 0;
    pick_pos = 0;
    // 1. Credit returns (clamped to the initial credits).
    if (credit_valid && credit_src < 16'(NDST)) begin
      cvc = int'(credit_vc);
      cur = {1'b0, n_credits[credit_src[1:0]][cvc]} + {1'b0, credit_credits};
      n_credits[credit_src[1:0]][cvc] = (cur > 16'(INITIAL_CREDITS)) ? 15'(INITIAL_CREDITS) : cur[14:0];
    end
    // 2. A request joins the queue of VC qp & 3.
    if (req_valid) begin
      evc = int'(req_qp[1:0]);
      if (int'(n_len[evc]) < QDEPTH) begin
        n_tag[evc][IW'(n_len[evc])] = req_tag;
        n_dst[evc][IW'(n_len[evc])] = req_dst;
        n_qp[evc][IW'(n_len[evc])] = req_qp;
        n_cost[evc][IW'(n_len[evc])] = req_cost;
        n_len[evc] = n_len[evc] + 1;
      end
    end
    // 3. One round from the pointer: the first entry that heads its flow and passes the gate.
    for (int k = 0; k < NVC; k++) begin
      evc = (int'(ptr) + k) % NVC;
      for (int j = 0; j < QDEPTH; j++) begin
        if (!found && j < int'(n_len[evc])) begin
          head = 1;
          for (int i = 0; i < QDEPTH; i++)
            if (i < j && n_dst[evc][i] == n_dst[evc][j] && n_qp[evc][i] == n_qp[evc][j]) head = 0;
          // PLANT_BUG = 2: the credit gate's off-by-one (> for >=), seen only at the boundary.
          pass = (n_cost[evc][j] == 0) ||
                 (PLANT_BUG == 2
                  ? ({1'b0, n_credits[n_dst[evc][j][1:0]][n_qp[evc][j][1:0]]} > {1'b0, n_cost[evc][j]} + 16'(UF_LIMIT))
                  : ({1'b0, n_credits[n_dst[evc][j][1:0]][n_qp[evc][j][1:0]]} >= {1'b0, n_cost[evc][j]} + 16'(UF_LIMIT)));
          if (head && pass) begin
            found = 1;
            pick_vc = evc;
            pick_pos = j;
          end
        end
      end
    end
    // 4. The grant: charge, remove, and the pointer rule.
    if (found) begin
      g_tag = n_tag[pick_vc][pick_pos];
      g_dst = n_dst[pick_vc][pick_pos];
      g_qp = n_qp[pick_vc][pick_pos];
      g_cost = n_cost[pick_vc][pick_pos];
      n_credits[n_dst[pick_vc][pick_pos][1:0]][n_qp[pick_vc][pick_pos][1:0]] =
          n_credits[n_dst[pick_vc][pick_pos][1:0]][n_qp[pick_vc][pick_pos][1:0]] - n_cost[pick_vc][pick_pos];
      for (int j = 0; j < QDEPTH - 1; j++)
        if (j >= pick_pos) begin
          n_tag[pick_vc][j] = n_tag[pick_vc][j+1];
          n_dst[pick_vc][j] = n_dst[pick_vc][j+1];
          n_qp[pick_vc][j] = n_qp[pick_vc][j+1];
          n_cost[pick_vc][j] = n_cost[pick_vc][j+1];
        end
      n_len[pick_vc] = n_len[pick_vc] - 1;
      if (pick_vc != int'(ptr)) begin
        n_ptr = 3'(pick_vc);
        n_counter = 0;
      end
      n_counter = n_counter + 1;
      if (n_counter >= weight(pick_vc)) begin
        n_ptr = 3'((pick_vc + 1) % NVC);
        n_counter = 0;
      end
    end else if (PLANT_BUG != 0 && (n_len[0] != 0 || n_len[1] != 0 || n_len[2] != 0 || n_len[3] != 0 || n_len[4] != 0)) begin
      // The planted bug: a blocked round passes the turn on.
      n_ptr = 3'((int'(ptr) + 1) % NVC);
      n_counter = 0;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      for (int v = 0; v < NVC; v++) q_len[v] <= 0;
      for (int d = 0; d < NDST; d++) for (int v = 0; v < 4; v++) credits[d][v] <= 15'(INITIAL_CREDITS);
      ptr <= 0;
      counter <= 0;
      grant_valid <= 0;
      grant_tag <= 0;
      grant_dst <= 0;
      grant_qp <= 0;
      grant_cost <= 0;
    end else begin
      q_tag <= n_tag;
      q_dst <= n_dst;
      q_qp <= n_qp;
      q_cost <= n_cost;
      q_len <= n_len;
      credits <= n_credits;
      ptr <= n_ptr;
      counter <= n_counter;
      grant_valid <= found;
      if (found) begin
        grant_tag <= g_tag;
        grant_dst <= g_dst;
        grant_qp <= g_qp;
        grant_cost <= g_cost;
      end
    end
  end

  always_comb begin
    depth_vc0 = 11'(q_len[0]);
    depth_vc1 = 11'(q_len[1]);
    depth_vc2 = 11'(q_len[2]);
    depth_vc3 = 11'(q_len[3]);
    depth_vc4 = 11'(q_len[4]);
    credits_d0 = {credits[0][3], credits[0][2], credits[0][1], credits[0][0]};
    credits_d1 = {credits[1][3], credits[1][2], credits[1][1], credits[1][0]};
    credits_d2 = {credits[2][3], credits[2][2], credits[2][1], credits[2][0]};
  end
endmodule
