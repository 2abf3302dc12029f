//! The slot FIFO and the MAC as a module testbench of the bank arbiter plays them (kind
//! `queue_feed`, `arb.feed` in the standalone `bank_arbiter`): it turns the testbench's
//! requests (`ArbReq`: a tag, a flow, a CBFC cost) into the queue ops the TX's slot FIFO makes,
//! hands the VC queues' grants back as the requests granted, and takes the frames as the MAC
//! does, giving a MAC2TX credit back for each. It models no RC Link logic: the queues, the
//! per-flow rule, the CBFC gate and the round robin around it are the nodes every RC Link TX
//! runs (`vc_queues`, `cbfc`, `vc_arbiter`, with `dcqcn`, `type2` and `mac_credit`), wired by
//! the same function (`rclink_tx`'s `add_vc_queues` and `add_queue_gates`).
//!
//! Seed 000 «VC 仲裁» (what the requests exercise); no seed describes the feed itself.
//!
//! ```text
//!                    +-- queue_feed ------------------------------------------+
//!  req ==(cap 4)===> | process 0: a request → a frame of one packet whose     | ==> q_ops (comb) : QueueOp Push
//!  stream<ArbReq>    |   payload costs `cost` credits (cost × 32 B, credit     | --> q_changes (comb) : u64
//!                    |   size 32 B, no overhead), a frame id, its flow          |
//!  frame ==========> |   the MAC: each frame taken, one MAC2TX credit back      | ==> mac_return : stream<MacCreditRet>
//!                    | process 1: <== q_grant (comb): the grant's request       | ==> grant : stream<ArbReq>
//!                    |   t2_seg, rate_cnp: never pushed (no TYPE2, no CNP)       |
//!                    +--------------------------------------------------------+
//! ```
//!
//! **Latency**: none. A request visible at n is in the queues' round of n; the request
//! granted at n is on `grant` at n+1 (as the frame is on the MAC's side).
//!
//! Counters (in the composite's scope): `grants`.
//!
//! Limits: a cost above 255 (the frame's 13-bit byte count at 32 B a credit) or above the
//! ledgers' `initial_credits − uf_limit` can never be sent and is a protocol violation; at most
//! 2 047 requests wait at once (the frame id's width).

use hwsim_hw::{
    Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, FastMap, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{
    ArbReq, ChipId, DataFrame, MacCreditRet, QpId, QueueOp, QueueOpKind, RateCnp, Segment, SlotGrant, UInt,
};
use serde::{Deserialize, Serialize};

/// The counters this block registers.
pub const COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "grants",
    "frames",
    "requests granted and pushed on `grant`",
)];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Bytes of CBFC credit the feed's frames are made of (the smallest credit size): a request of
/// cost c is a packet of c × 32 bytes.
pub const CREDIT_BYTES: u32 = 32;
/// The largest cost a request may carry: its packet's byte count fits the segment's 13 bits.
pub const MAX_COST: u32 = 255;
/// The payload limit the queue side runs with, so that a packet of the largest cost is one packet.
pub const MAX_PAYLOAD: u32 = MAX_COST * CREDIT_BYTES;
/// Frame ids (the queue op's 11 bits, 0..=2046).
const MAX_IDS: usize = 2047;

/// Parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// The largest cost the ledgers can ever admit (`initial_credits − uf_limit`; at most 255).
    pub max_cost: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { max_cost: MAX_COST }
    }
}

/// Port list: `req` and `grant` are the composite's; the others are the slot FIFO's ports of
/// the same names (`q_ops`, `q_changes`, `q_grant`, `t2_seg`, `rate_cnp`) and the MAC's side of
/// the frames and credits.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<ArbReq>("req", 4).doc("a frame joining the queue of VC qp & 3"),
        PortDecl::comb_stream_out::<QueueOp>("q_ops")
            .width(4)
            .doc("the requests taken this cycle, as the slot FIFO's Push ops, to vc_queues in the same cycle"),
        PortDecl::comb_output::<u64>("q_changes").doc("requests taken so far: a change runs the VC queues' round"),
        PortDecl::comb_stream_in::<SlotGrant>("q_grant", 1)
            .process(1)
            .doc("the frame the VC queues granted, in the same cycle"),
        PortDecl::stream_out::<ArbReq>("grant")
            .process(1)
            .doc("granted frames, one per cycle at most"),
        PortDecl::comb_stream_out::<Segment>("t2_seg").doc("TYPE2 segments: none (to type2.seg)"),
        PortDecl::comb_stream_out::<RateCnp>("rate_cnp").doc("CNPs: none (to dcqcn.cnp)"),
        PortDecl::stream_in::<DataFrame>("frame", 2).doc("the granted frames, taken as the MAC takes them"),
        PortDecl::stream_out::<MacCreditRet>("mac_return")
            .doc("a MAC2TX credit back for each frame taken (to mac_credit.credit)"),
    ]
}

/// The feed.
pub struct QueueFeed {
    req: StreamIn<ArbReq>,
    q_ops: StreamOut<QueueOp>,
    q_changes: CombOut<u64>,
    q_grant: StreamIn<SlotGrant>,
    grant: StreamOut<ArbReq>,
    frame: StreamIn<DataFrame>,
    mac_return: StreamOut<MacCreditRet>,
    /// Requests taken so far (`q_changes`).
    taken: u64,
    /// Waiting requests by frame id (None: free); ids of granted ones are reused.
    entries: Vec<Option<ArbReq>>,
    free: Vec<u16>,
    /// Flows numbered in the order they first queue a frame, as the slot FIFO numbers them.
    flows: FastMap<(ChipId, QpId), u32>,
    max_cost: u32,
    c_grants: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    // Bound so the queue side's ports are driven; the feed never pushes on them.
    let _: StreamOut<Segment> = b.stream_out("t2_seg")?;
    let _: StreamOut<RateCnp> = b.stream_out("rate_cnp")?;
    Ok(Box::new(QueueFeed {
        req: b.stream_in("req")?,
        q_ops: b.stream_out("q_ops")?,
        q_changes: b.comb_output("q_changes")?,
        q_grant: b.stream_in("q_grant")?,
        grant: b.stream_out("grant")?,
        frame: b.stream_in("frame")?,
        mac_return: b.stream_out("mac_return")?,
        taken: 0,
        entries: Vec::new(),
        free: Vec::new(),
        flows: hwsim_hw::fast_map(),
        max_cost: p.max_cost.min(MAX_COST),
        c_grants: b.counter("grants"),
    }))
}

impl Component for QueueFeed {
    /// Process 0: the MAC's side (frames taken, credits back), then the requests as Push ops.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        while self.frame.pop().is_some() {
            self.mac_return.push(MacCreditRet { mul: false });
        }
        let before = self.taken;
        while let Some(r) = self.req.pop() {
            if r.cost as u32 > self.max_cost {
                ctx.violation(format!("{r:?}: cost never sendable (at most {})", self.max_cost));
                continue;
            }
            let id = match self.free.pop() {
                Some(id) => {
                    self.entries[id as usize] = Some(r);
                    id
                }
                None if self.entries.len() < MAX_IDS => {
                    self.entries.push(Some(r));
                    self.entries.len() as u16 - 1
                }
                None => {
                    ctx.violation(format!("{r:?}: {MAX_IDS} requests already wait"));
                    continue;
                }
            };
            let n = self.flows.len() as u32;
            let flow = *self.flows.entry((r.dst, r.qp)).or_insert(n);
            self.q_ops.push(QueueOp {
                op: QueueOpKind::Push,
                id: UInt::wrap(id as u64),
                flow,
                seg: Segment {
                    txn: r.tag as u64,
                    dst: r.dst,
                    qp: r.qp,
                    bytes: r.cost as u32 * CREDIT_BYTES,
                    ..Segment::default()
                },
                npkts: 1,
                ..QueueOp::default()
            });
            self.taken += 1;
        }
        if self.taken != before {
            self.q_changes.set(self.taken);
        }
        Wake::OnInput
    }

    /// Process 1: the grant of this cycle, as the request it was.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(g) = self.q_grant.pop() {
            let id = g.id.0 as usize;
            let Some(r) = self.entries.get_mut(id).and_then(Option::take).filter(|_| !g.type2) else {
                ctx.violation(format!("queue_feed: a grant of frame {id}, which no request holds"));
                continue;
            };
            self.free.push(id as u16);
            if !self.grant.can_push() {
                ctx.violation("queue_feed: `grant` full (its reader takes less than one a cycle)");
                continue;
            }
            self.grant.push(r);
            ctx.count(self.c_grants, 1);
        }
        Wake::OnInput
    }
}
