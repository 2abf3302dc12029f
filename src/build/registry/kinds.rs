//! The table of block kinds: every kind `hwsim list` shows, in its order — the kernel's
//! examples, then the chip's blocks (PAXI, RC Link TX and RX and their nodes), then the
//! switches' — each with its description, ports, build, parameter check and counter tables.

use hwsim_modules::kernel_examples as kx;
use hwsim_modules::rclink as rc;
use hwsim_modules::switch as sw;

use super::{checked_kind, composite_kind, kind, pipe_kind, BlockKind};

/// All block kinds, made anew.
pub(super) fn all_blocks() -> Vec<BlockKind> {
    let mut v = kernel_examples();
    v.extend(chip_blocks());
    v.extend(rclink_tx_blocks());
    v.extend(rclink_rx_blocks());
    v.extend(switch_blocks());
    v
}

/// The kernel's examples (and the W3 workload's blocks).
fn kernel_examples() -> Vec<BlockKind> {
    vec![
        kind(
            "counter",
            "free-running counter (kernel example; W3 source)",
            kx::counter::ports,
            kx::counter::build,
            kx::counter::COUNTER_TABLES,
        ),
        kind(
            "add1",
            "out = in + 1: a register, latency 1 (kernel example; W3 stage), or with `input`/`output: comb` a combinational stage",
            kx::add1::ports,
            kx::add1::build,
            kx::add1::COUNTER_TABLES,
        ),
        kind(
            "stage",
            "out = f^stages(in), f = `work` mixing rounds + 1: datapath logic for the price of a boundary (kernel example)",
            kx::stage::ports,
            kx::stage::build,
            kx::stage::COUNTER_TABLES,
        ),
        kind(
            "producer",
            "stream source with back-pressure (kernel example)",
            kx::producer::ports,
            kx::producer::build,
            kx::producer::COUNTER_TABLES,
        ),
        kind(
            "fifo",
            "synchronous FIFO between two streams (kernel example)",
            kx::fifo::ports,
            kx::fifo::build,
            kx::fifo::COUNTER_TABLES,
        ),
        kind(
            "consumer",
            "stream sink with a service interval (kernel example)",
            kx::consumer::ports,
            kx::consumer::build,
            kx::consumer::COUNTER_TABLES,
        ),
        kind(
            "timer",
            "periodic toggle (kernel example; idle benchmark)",
            kx::timer::ports,
            kx::timer::build,
            kx::timer::COUNTER_TABLES,
        ),
        pipe_kind(),
    ]
}

/// A chip's blocks around its link groups: CDMA, PAXI, the MAC and the link, the router, the
/// rate monitor.
fn chip_blocks() -> Vec<BlockKind> {
    vec![
        kind(
            "cdma",
            "CDMA traffic source: AXI write and read transactions into the PAXI core",
            rc::cdma::ports,
            rc::cdma::build,
            rc::cdma::COUNTER_TABLES,
        ),
        composite_kind(
            "paxi",
            "PAXI (composite: paxi_rx_vc → paxi_completer → paxi_pack (B) → paxi_core ⇄ paxi_pack (AR)): AXI writes, reads and TYPE2 multicast, W/R/MUL OST, ITLV, AR/B packing, B and R responses, RX VC and AXI channel buffers (seed 000/002)",
            rc::paxi::ports,
            rc::paxi::expand,
            rc::paxi::check_ports,
            rc::paxi::COUNTER_TABLES,
        ),
        checked_kind(
            "paxi_core",
            "PAXI without its RX side, completer and packing buffers: requester (MPS split, W/R/MUL OST, ITLV, R and B back), dispatch to the LGs (its AR flits, the B flits, the completer's R frames; the part of paxi not yet cut into nodes; seed 000/002)",
            rc::paxi::core_ports,
            rc::paxi::build,
            rc::paxi::check_ports,
            rc::paxi::CORE_COUNTER_TABLES,
        ),
        checked_kind(
            "paxi_completer",
            "PAXI completer: the AXI slave of the W, AR and multicast frames that arrive, Bs due to the B packing buffer, reads in beats into the R buffers, R frames to the core to send (seed 002 «完整传输流程»)",
            rc::paxi::completer::ports,
            rc::paxi::completer::build,
            |_| Ok(()),
            rc::paxi::completer::COUNTER_TABLES,
        ),
        checked_kind(
            "paxi_rx_vc",
            "PAXI RX side: REQ/RSP/MUL VC buffers with their watermarks (rx_pause), W/AR/R/B AXI channel buffers, frames to the core in the cycle the bus takes them (seed 002 «VC Buffer», «AXI 通道 Buffer»)",
            rc::paxi::rx_vc::ports,
            rc::paxi::rx_vc::build,
            rc::paxi::rx_vc::check_ports,
            rc::paxi::rx_vc::COUNTER_TABLES,
        ),
        kind(
            "paxi_pack",
            "PAXI AR/B TX packing buffer: up to 16 per flit on watermark, DA/VC change, timeout, frame length; standalone, or `inline` as the PAXI runs it (seed 002)",
            rc::paxi_pack::ports,
            rc::paxi_pack::build,
            rc::paxi_pack::COUNTER_TABLES,
        ),
        kind(
            "mac_tx",
            "per-LG MAC/SerDes serializer: max(datapath, line rate), exact carry (seed 000 «MAC Credit»)",
            rc::mac::ports,
            rc::mac::build,
            rc::mac::COUNTER_TABLES,
        ),
        kind(
            "phylink",
            "one edge direction: REQ and RSP queues, credit side channel (seed 000 «物理链路模型»)",
            rc::phylink::ports,
            rc::phylink::build,
            rc::phylink::COUNTER_TABLES,
        ),
        checked_kind(
            "router",
            "chip port mux: relay forwarding by route, multicast replication, PFC from the PAXI watermarks, ACK-VC credit returns",
            rc::router::ports,
            rc::router::build,
            rc::router::check,
            rc::router::COUNTER_TABLES,
        ),
        checked_kind(
            "rate_monitor",
            "peak bytes over any window of cumulative byte signals",
            rc::monitor::ports,
            rc::monitor::build,
            rc::monitor::check,
            rc::monitor::COUNTER_TABLES,
        ),
    ]
}

/// The RC Link TX and every node it is made of (and the standalone module kinds).
fn rclink_tx_blocks() -> Vec<BlockKind> {
    vec![
        composite_kind(
            "rclink_tx",
            "RC Link TX of one LG (composite: cnp_merge → slot_fifo → vc_queues ⇄ cbfc, ⇄ type2, ⇄ dcqcn, ⇄ vc_arbiter, ⇄ mac_credit): slot FIFO, PSN, bank arbiter, CBFC, rate gate, MAC credit (seed 000 «TX 侧设计»)",
            rc::tx::ports,
            rc::tx::expand,
            |p| p.check(),
            rc::tx::COUNTER_TABLES,
        ),
        checked_kind(
            "slot_fifo",
            "RC Link TX slot FIFO of one LG (tx.slot_fifo in every TX): 3-state slots, PSN, ACK/NAK, Go-Back-N, retry timeout, QP fatal, the control and segment intake; its VC queue changes to vc_queues, the grants back (seed 000 «Slot 管理», «Go-Back-N 重传»)",
            rc::slot_fifo::ports,
            rc::slot_fifo::build,
            |p| p.check(),
            rc::tx::COUNTER_TABLES,
        ),
        checked_kind(
            "vc_queues",
            "RC Link TX VC queues (tx.vc_queues in every TX): the bank arbiter's queue side — per VC the first flow head the rate gate and CBFC pass, the per-flow rule, the request to vc_arbiter and its grant, TYPE2's MUL turn, the frames to the MAC (seed 000 «VC 仲裁», «CBFC 流控»)",
            rc::vc_queues::ports,
            rc::vc_queues::build,
            |p| p.check(),
            rc::tx::COUNTER_TABLES,
        ),
        composite_kind(
            "bank_arbiter",
            "RC Link TX bank arbiter for module testbenches (composite: queue_feed → the TX's vc_queues ⇄ vc_arbiter, ⇄ cbfc, ⇄ dcqcn, ⇄ type2, ⇄ mac_credit): weighted RR pointer/counter, per-flow rule, CBFC gate, the nodes every TX runs (seed 000 «VC 仲裁»)",
            rc::bank_arbiter_block::ports,
            rc::bank_arbiter_block::expand,
            |p| p.check(),
            rc::bank_arbiter_block::COUNTER_TABLES,
        ),
        kind(
            "queue_feed",
            "the slot FIFO and the MAC as the standalone bank arbiter's testbench plays them (arb.feed): requests in as the slot FIFO's queue ops, the VC queues' grants out as the requests granted, a MAC2TX credit back per frame",
            rc::queue_feed::ports,
            rc::queue_feed::build,
            rc::queue_feed::COUNTER_TABLES,
        ),
        kind(
            "vc_arbiter",
            "RC Link TX bank arbiter's round robin over the VCs (tx.arbiter in every TX): pointer/counter, grant of an eligible VC (seed 000 «VC 仲裁»)",
            rc::vc_arbiter::ports,
            rc::vc_arbiter::build,
            &[],
        ),
        checked_kind(
            "cbfc",
            "RC Link TX CBFC controller (tx.cbfc in every TX): ledgers per (dst, vc) and TYPE2 member, returns and charges, counts to the TX's send rule (seed 000 «CBFC 流控»)",
            rc::cbfc::ports,
            rc::cbfc::build,
            rc::cbfc::check_params,
            rc::cbfc::COUNTER_TABLES,
        ),
        checked_kind(
            "type2",
            "RC Link TX TYPE2 (multicast) queue (tx.type2 in every TX): the Mul segments, the head's two gates (every member's TYPE2 CBFC ledger, a multicast MAC TX credit) offered to the TX core's round, the grant's take (seed 002 «多播双重流控»)",
            rc::type2::ports,
            rc::type2::build,
            |p| p.check(),
            rc::type2::COUNTER_TABLES,
        ),
        kind(
            "mac_credit",
            "RC Link TX MAC2TX and multicast MAC TX credit counters: returns in, the grant's take out, counts to the arbiter in the same cycle (seed 000 «打包延迟与 MAC Credit», 002 «多播双重流控»)",
            rc::mac_credit::ports,
            rc::mac_credit::build,
            rc::mac_credit::COUNTER_TABLES,
        ),
        kind(
            "ack_return",
            "RC Link TX ACK-VC credit return: the control messages taken in, their credits summed per sender, one return per cycle (seed 002 «CBFC 详细行为» type1_ack_cbfc)",
            rc::ack_cbfc::return_ports,
            rc::ack_cbfc::return_build,
            &[rc::ack_cbfc::RETURN_COUNTERS],
        ),
        kind(
            "dcqcn",
            "RC Link TX DCQCN rate gate of one LG (tx.dcqcn in every TX): per flow on_cnp, byte counter and timer recovery, pacing told to the TX core's round (seed 000 «DCQCN»)",
            rc::dcqcn::ports,
            rc::dcqcn::build,
            rc::dcqcn::COUNTER_TABLES,
        ),
        kind(
            "cc_window",
            "RC Link TX per-QP window rate control of one LG (tx.cc_window with rate_control: window): bytes per QP per CC_WINDOW, masked (WAIT_CRD) at length_thr to the window's end (seed 002/003 «Per-QP 速率控制»)",
            rc::cc_window::ports,
            rc::cc_window::build,
            rc::cc_window::COUNTER_TABLES,
        ),
        kind(
            "cnp_merge",
            "CNP MERGE: QPID buffer of 8 and a timer threshold filter repeated CNPs (seed 002 «CNP MERGE»)",
            rc::cnp_merge::ports,
            rc::cnp_merge::build,
            rc::cnp_merge::COUNTER_TABLES,
        ),
    ]
}

/// The RC Link RX and every node it is made of, and the RX cap.
fn rclink_rx_blocks() -> Vec<BlockKind> {
    vec![
        composite_kind(
            "rclink_rx",
            "RC Link RX of one LG (composite: psn_check → credit_return, cnp_gen, ack_merge → rx_ctrl): PSN check, credit return, CNP generation, ACK MERGE, ACK-VC CBFC (seed 000 «RX 侧设计», 002 «CBFC»)",
            rc::rx::ports,
            rc::rx::expand,
            |_| Ok(()),
            rc::rx::COUNTER_TABLES,
        ),
        kind(
            "psn_check",
            "RC Link RX PSN check: EPSN per (src, qp), NAK once per gap, FACK, the credit charge, delivery; hands its control messages, accepted packets, CE marks and credit charges on in the same cycle (seed 000 «PSN 校验与三种结果»)",
            rc::psn_check::ports,
            rc::psn_check::build,
            rc::psn_check::COUNTER_TABLES,
        ),
        kind(
            "credit_return",
            "RC Link RX credit return: the PSN check's credit charges back to their senders credit_return_delay later, summed per cycle and (sender, VC), one message per cycle, held by PAXI's pause (seed 000 «credit 返还»)",
            rc::credit_return::ports,
            rc::credit_return::build,
            rc::credit_return::COUNTER_TABLES,
        ),
        kind(
            "cnp_gen",
            "RC Link RX CNP generation: a CE-marked accepted packet -> CNP, at most one per (src, qp) per cnp_interval, to the control queue in the same cycle (seed 000 «ECN 检测与 CNP 生成»)",
            rc::cnp_gen::ports,
            rc::cnp_gen::build,
            rc::cnp_gen::COUNTER_TABLES,
        ),
        kind(
            "ack_merge",
            "RC Link RX ACK MERGE: demand-driven poll, cumulative ACK ≤ merge_depth, handed to the control queue in the same cycle (seed 000 «ACK MERGE 汇聚»)",
            rc::ack_merge::ports,
            rc::ack_merge::build,
            rc::ack_merge::COUNTER_TABLES,
        ),
        kind(
            "rx_ctrl",
            "RC Link RX control queue: ACK / NAK / CNP in generation order, one per cycle, ACK-VC CBFC gate (seed 000 «RX 侧设计», 002 «CBFC 详细行为»)",
            rc::rx_ctrl::ports,
            rc::rx_ctrl::build,
            rc::rx_ctrl::COUNTER_TABLES,
        ),
        kind(
            "rx_cap",
            "per-LG receive serializer at line rate; data only (seed 000 «芯片级聚合接收 cap»)",
            rc::rx_cap::ports,
            rc::rx_cap::build,
            rc::rx_cap::COUNTER_TABLES,
        ),
    ]
}

/// The switches' blocks and their traffic source.
fn switch_blocks() -> Vec<BlockKind> {
    vec![
        checked_kind(
            "voq_switch",
            "input-queued cell switch: VOQs, crossbar matched by islip | pim | fifo (seed 003 «VOQ», «iSLIP»)",
            sw::voq_switch::ports,
            sw::voq_switch::build,
            sw::voq_switch::check,
            sw::voq_switch::COUNTER_TABLES,
        ),
        kind(
            "switch_egress",
            "switch egress port: SP for ACK/CNP, WRR REQ:RSP, best effort last, ECN RED at enqueue (seed 003)",
            sw::egress::ports,
            sw::egress::build,
            sw::egress::COUNTER_TABLES,
        ),
        composite_kind(
            "l2_switch",
            "L2 switch for chip traffic (composite: switch_ingress → l2_switch_core ⇄ switch_alloc, ⇄ switch_pfc): ingress latency, route by dst chip, VOQs + crossbar, SP for ACK/CNP, WRR REQ:RSP, ECN RED, port-rate serialization (seed 003)",
            sw::l2_switch::ports,
            sw::l2_switch::expand,
            sw::l2_switch::check,
            sw::l2_switch::COUNTER_TABLES,
        ),
        checked_kind(
            "l2_switch_core",
            "L2 switch without its ingress, crossbar allocator and PFC controller: ingress pipeline delay, shared buffer + DT, VOQs, egress, ECN RED, PFC accounting (the part of l2_switch not yet cut into nodes; seed 003)",
            sw::l2_switch::core_ports,
            sw::l2_switch::build,
            sw::l2_switch::check,
            sw::l2_switch::COUNTER_TABLES,
        ),
        checked_kind(
            "switch_ingress",
            "L2 switch ingress: per input, lookup by destination (ECMP over equal-cost ports, multicast groups) and classification into a VOQ level, handed to the buffer in the cycle of arrival (seed 003 «入口处理», «优先级分类»)",
            sw::l2_switch::ingress::ports,
            sw::l2_switch::ingress::build,
            sw::l2_switch::ingress::check,
            sw::l2_switch::ingress::COUNTER_TABLES,
        ),
        checked_kind(
            "switch_pfc",
            "L2 switch PFC controller: per port the pause received (REQ data priority) with its watchdog, shown to the core in the cycle; XOFF above `xoff` / XON at `xon` of the ingress bytes the core shows, in the same cycle (seed 003 «PFC»)",
            sw::l2_switch::pfc::ports,
            sw::l2_switch::pfc::build,
            sw::l2_switch::pfc::check,
            sw::l2_switch::pfc::COUNTER_TABLES,
        ),
        checked_kind(
            "switch_alloc",
            "L2 switch crossbar allocator: one islip | pim | fifo allocator per VOQ level, strict priority and WRR passes, requests → grants in the same cycle (seed 003 «iSLIP 调度»)",
            sw::l2_switch::alloc::ports,
            sw::l2_switch::alloc::build,
            sw::l2_switch::alloc::check,
            &[],
        ),
        checked_kind(
            "cell_source",
            "synthetic switch traffic: Bernoulli cells per input at `load`, uniform / hotspot / permutation",
            sw::source::ports,
            sw::source::build,
            |p| p.check(),
            sw::source::COUNTER_TABLES,
        ),
    ]
}
