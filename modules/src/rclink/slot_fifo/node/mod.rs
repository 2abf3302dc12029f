//! The slot FIFO node (kind `slot_fifo`, `tx.slot_fifo` in every RC Link TX): its ports, its
//! state and `build`; the cycle (cycle.rs), the inputs (ingress.rs) and the waves and gauges
//! (report.rs). It takes the TX's parameters ([`tx::Params`](crate::rclink::tx::Params)); the
//! slot pool it runs is the parent module's [`SlotFifo`](super::SlotFifo), whose header has the
//! port diagram, the timing and the deviations.

use hwsim_hw::{Binder, BuildResult, CombOut, PortDecl, StreamIn, StreamOut};
use hwsim_ports::{Ctrl, FrameDone, QueueOp, RateCnp, Segment, SlotGrant, TxCtrl};

use super::{SlotCounters, SlotFifo, SlotView};
use crate::rclink::ack_cbfc::TAKEN_PER_CYCLE;
use crate::rclink::cbfc::Cbfc;
use crate::rclink::tx::Params;
use crate::rclink::{cnp_merge, vc_queues};

/// The cycle: the processes, their phases in their order.
mod cycle;
/// Inputs: ACK/NAK/CNP on `ctrl`, segments.
mod ingress;
/// The block's own counter ids and the end-of-cycle waves and gauges.
mod report;

use report::Counters;

/// Port list (kind `slot_fifo`, `tx.slot_fifo`): the inputs, the slot state, and
/// the VC queues' ops out and grants in; the round is `vc_queues`'s, whose frames, depths and
/// WAIT_CRD the composite exports beside these.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let depth = vc_queues::ops_depth(p.slots);
    let mut v = vec![
        PortDecl::stream_in::<Segment>("seg", 1)
            .doc("segments (frames) from the PAXI core; left queued while slots are short"),
        PortDecl::comb_stream_in::<TxCtrl>("ctrl", cnp_merge::CTRL_DEPTH)
            .doc("ACK / NAK / CNP back from the receiver (src = our dst), through CNP MERGE in the same cycle"),
        PortDecl::stream_out::<FrameDone>("done").doc("to PAXI: every packet of the frame was ACKed"),
        PortDecl::comb_stream_out::<Segment>("t2_seg")
            .doc("TYPE2 segments taken from `seg`, to the TYPE2 queue in the same cycle (type2.seg)"),
        PortDecl::comb_stream_out::<QueueOp>("q_ops").width(depth).doc(
            "the changes of the VC queues (a segment taken, a Go-Back-N, a fatal QP), to vc_queues in the same cycle",
        ),
        PortDecl::comb_output::<u64>("q_changes")
            .doc("changes so far (slots, control messages, TYPE2 segments): a change runs the VC queues' round"),
        PortDecl::comb_stream_in::<SlotGrant>("q_grant", 1)
            .process(1)
            .doc("the packets the VC queues granted, in the same cycle (WaitGrant → WaitAck, the retry timer)"),
    ];
    v.extend(SlotView::ports("", "slots_used").into_iter().map(|d| d.process(1)));
    v.push(
        PortDecl::comb_stream_out::<RateCnp>("rate_cnp")
            .width(cnp_merge::CTRL_DEPTH)
            .doc("the CNPs that passed CNP MERGE, per flow, to the rate gate in the same cycle (dcqcn.cnp)"),
    );
    if p.ack_cbfc {
        v.push(
            PortDecl::comb_stream_out::<Ctrl>("ctrl_taken")
                .width(TAKEN_PER_CYCLE)
                .doc("the control messages taken in from `ctrl`, to the ACK-VC credit return (`ack_return`) in the same cycle"),
        );
    }
    v
}

/// The block: the slot FIFO and the TX's inputs.
pub struct SlotFifoNode {
    p: Params,
    seg_in: StreamIn<Segment>,
    ctrl_in: StreamIn<TxCtrl>,
    done_out: StreamOut<FrameDone>,
    c: Counters,
    sc: SlotCounters,
    /// The CNPs that passed CNP MERGE, to the rate gate.
    rate_cnp: StreamOut<RateCnp>,
    slots: SlotFifo,
    slot_view: SlotView,
    /// The VC queues' ops out, the change count, the grants in.
    q_ops: StreamOut<QueueOp>,
    q_changes: CombOut<u64>,
    q_grant: StreamIn<SlotGrant>,
    changes: u64,
    /// The slot FIFO changed in process 0 (shown in process 1).
    slots_changed: bool,
    /// The CBFC costs (a segment whose packet never fits the credits is refused).
    cbfc: Cbfc,
    /// The segment at the head of `seg` was already counted as slot-blocked.
    seg_block_counted: bool,
    /// The TYPE2 intake: the segments to the TYPE2 queue and the queue's room.
    t2: Type2Intake,
    /// The control messages taken in, to the ACK-VC credit return (with `ack_cbfc`).
    ctrl_taken: Option<StreamOut<Ctrl>>,
}

/// The slot FIFO's TYPE2 intake: `Mul` segments from `seg` to the TYPE2 queue (`tx.type2`).
struct Type2Intake {
    seg: StreamOut<Segment>,
    /// Frames in the queue: those pushed less those granted (the producer's count of the
    /// queue's room, so a push never meets a full queue).
    queued: u32,
    cap: u32,
}

/// Binds ports; refuses out-of-range parameters with a message naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    p.check()?;
    let slots = SlotFifo::new(p.slots, p.max_payload, p.max_retry, p.retry_timeout)?;
    let cbfc = Cbfc::new(p.credit_size, p.pkt_ovhd, p.uf_limit, p.initial_credits)?;
    Ok(Box::new(SlotFifoNode {
        p: p.clone(),
        seg_in: b.stream_in("seg")?,
        ctrl_in: b.stream_in("ctrl")?,
        done_out: b.stream_out("done")?,
        c: Counters::declare(b),
        sc: SlotCounters::declare(b),
        rate_cnp: b.stream_out("rate_cnp")?,
        slot_view: SlotView::bind("", "slots_used", b)?,
        slots,
        q_ops: b.stream_out("q_ops")?,
        q_changes: b.comb_output("q_changes")?,
        q_grant: b.stream_in("q_grant")?,
        changes: 0,
        slots_changed: false,
        cbfc,
        seg_block_counted: false,
        t2: Type2Intake {
            seg: b.stream_out("t2_seg")?,
            queued: 0,
            cap: p.type2_queue,
        },
        ctrl_taken: if p.ack_cbfc {
            Some(b.stream_out("ctrl_taken")?)
        } else {
            None
        },
    }))
}
