//! The standalone `slot_fifo` block (seed 000 appendix C «TX 参数»): the testbench plays the
//! arbiter on `grant`; ACK/NAK on `ctrl`, segments on `seg`, frames on `frame`, `FrameDone` on
//! `done`.

use hwsim_hw::{Binder, BuildResult, Component, Ctx, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ChipId, Ctrl, DataFrame, FlitKind, FrameDone, LgId, Opcode, Segment};
use serde::{Deserialize, Serialize};

use super::{accept_segments, misrouted, DepthView, SlotCounters, SlotFifo, SlotView, NUM_VC};
use crate::rclink::framing::Framer;
use crate::rclink::vc_queues::{frame_of, Gate, QueuedFrame, VcQueues};

/// Parameters of the standalone block (seed 000 appendix C «TX 参数»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (`DataFrame.src`).
    pub chip: ChipId,
    /// This link group, 0..=7.
    pub lg: LgId,
    /// Slot pool size TYPE1_OST, in packets, 1..=2047.
    pub slots: u32,
    /// MAX_PAYLOAD, bytes, 1..=65535.
    pub max_payload: u32,
    /// HEADER_OVERHEAD carried in `DataFrame.pkt_ovhd`, bytes, 0..=511.
    pub pkt_ovhd: u32,
    /// MAX_RETRY.
    pub max_retry: u32,
    /// RETRY_TIMEOUT_NS, ≥ 1.
    pub retry_timeout: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            slots: 512,
            max_payload: 1344,
            pkt_ovhd: 50,
            max_retry: 15,
            retry_timeout: 50_000,
        }
    }
}

/// Port list of the standalone block.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::stream_in::<Segment>("seg", 1).doc("segments (frames) from PAXI; left queued while slots are short"),
        PortDecl::stream_in::<u8>("grant", 1).doc("the arbiter's grant: a VC whose first queued frame is sent"),
        PortDecl::stream_in::<Ctrl>("ctrl", 8).doc("ACK / NAK (src = our dst)"),
        PortDecl::stream_out::<DataFrame>("frame").doc("granted frames (or resent tails)"),
        PortDecl::stream_out::<FrameDone>("done").doc("to PAXI: every packet of the frame was ACKed"),
    ];
    v.extend(SlotView::ports("", "slots_used"));
    v.extend(DepthView::ports(""));
    v
}

/// The standalone `slot_fifo` block.
pub struct SlotFifoBlock {
    p: Params,
    s: SlotFifo,
    /// Its VC queues (the slot FIFO's ops keep them).
    q: VcQueues<QueuedFrame>,
    c: SlotCounters,
    view: SlotView,
    depth: DepthView,
    /// The link's part of the frames (no header fields: the defaults).
    framer: Framer,
    seg: StreamIn<Segment>,
    grant: StreamIn<u8>,
    ctrl: StreamIn<Ctrl>,
    frame: StreamOut<DataFrame>,
    done: StreamOut<FrameDone>,
    seg_block_counted: bool,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.lg > 7 {
        return Err(format!("lg = {}: must be in 0..=7", p.lg));
    }
    if p.pkt_ovhd > 511 {
        return Err(format!("pkt_ovhd = {}: must be in 0..=511 bytes", p.pkt_ovhd));
    }
    let s = SlotFifo::new(p.slots, p.max_payload, p.max_retry, p.retry_timeout)?;
    Ok(Box::new(SlotFifoBlock {
        p: p.clone(),
        s,
        q: VcQueues::default(),
        c: SlotCounters::declare(b),
        view: SlotView::bind("", "slots_used", b)?,
        depth: DepthView::bind("", b)?,
        framer: Framer {
            src: p.chip,
            lg: p.lg,
            pkt_ovhd: p.pkt_ovhd as u16,
            max_payload: p.max_payload as u16,
        },
        seg: b.stream_in("seg")?,
        grant: b.stream_in("grant")?,
        ctrl: b.stream_in("ctrl")?,
        frame: b.stream_out("frame")?,
        done: b.stream_out("done")?,
        seg_block_counted: false,
    }))
}

impl Component for SlotFifoBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(msg) = self.ctrl.pop() {
            if let Some(why) = misrouted(&msg, self.p.chip, self.p.lg) {
                ctx.violation(why);
                continue;
            }
            match msg.rh.opcode() {
                Opcode::Ack => {
                    self.s
                        .on_ack(ctx, &self.c, msg.src, msg.rh.qp(), msg.rh.psn(), msg.rh.is_nak());
                }
                Opcode::Cnp => {}
                Opcode::Data => ctx.violation(format!("data opcode on the ctrl path: {msg:?}")),
            }
        }
        self.s.expire_timeouts(ctx, &self.c, now);
        let (lg, slots) = (self.p.lg, self.p.slots);
        accept_segments(
            ctx,
            &mut self.s,
            &self.c,
            &self.seg,
            &mut self.seg_block_counted,
            |seg, n| {
                if seg.lg != lg {
                    Some(format!("for LG {}, this is LG {lg}", seg.lg))
                } else if seg.paxi.kind == FlitKind::Mul {
                    Some("a TYPE2 (multicast) segment: the slot FIFO holds TYPE1 only (rclink_tx takes TYPE2)".into())
                } else if n > u8::MAX as u32 || n > slots {
                    Some(format!(
                        "{n} packets never fit (slots = {slots}, at most 255 per frame)"
                    ))
                } else {
                    None
                }
            },
        );
        if let Some(vc) = self.grant.pop() {
            let vc = vc as usize;
            if vc >= NUM_VC {
                ctx.violation(format!("grant for VC {vc}: VCs are 0..=4"));
            } else {
                // The testbench is the arbiter: the VC's first frame goes whole.
                self.s.take_ops(&mut self.q);
                if self.q.find_heads(|_| Gate::Pass) & (1 << vc) != 0 {
                    let head = *self.q.head(vc).expect("eligible");
                    let k = head.npkts - head.sent;
                    self.q.grant(vc, k);
                    self.s.granted(head.id, k, now);
                    let hdr = [Default::default(); 2];
                    self.frame.push(frame_of(&self.framer, &hdr, &head, k, now));
                }
            }
        }
        if self.s.done_waiting() > 0 && self.done.can_push() {
            let d = self.s.pop_done().expect("waiting");
            self.done.push(d);
        }
        if self.s.take_changed() {
            self.s.take_ops(&mut self.q);
            self.view.show(&self.s);
            self.depth.show(&self.q);
        }
        self.s.update_gauges(ctx, &self.c);
        let deadline = self.s.next_deadline();
        if self.s.done_waiting() > 0 && self.done.space() > 1 {
            Wake::NextCycle
        } else {
            Wake::earliest(deadline)
        }
    }
}
