//! The TYPE2 (multicast) queue of one RC Link TX (one LG) and its two gates: the frames PAXI
//! sends to a multicast group wait here until every member's TYPE2 CBFC ledger and a multicast
//! MAC TX credit admit them.
//!
//! Seed 002 «多播双重流控» (TYPE2 CBFC per member and the multicast MAC TX credit, «两者均通过才允许
//! 发送») and «RC Link 资源» (TYPE2 column: OST 16, 2048 credits per member); seed 000 «CBFC 流控»
//! (the per-packet rule, the same for TYPE2).
//!
//! The node is `chip.lgK.tx.type2` (kind `type2`) in every TX, and the kind module testbenches
//! drive. It keeps the queue and the members' ledger counts the CBFC controller (`tx.cbfc`)
//! tells it, and offers its head to the VC queues' arbitration round, where TYPE2 is the MUL VC:
//!
//! ```text
//!                           +-- type2 --------------------------------------------+
//!  seg =====(comb, 16)====> | process 0: counts and charged counts of the TYPE2    | --(comb)--> offer : signal<Type2Offer>
//!  stream<Segment>          |   ledgers; the segments into the queue (misrouted,   |   queued, the head, block
//!  (slot_fifo, process 0)   |   never sendable: protocol violations); the head's   |   (none / mac / credit), its
//!  counts ==(comb, 8)=====> |   gates: a multicast MAC credit, then every member's |   cost per member, returns
//!  charged ==============>  |   ledger admits all its packets                      |   (vc_queues, process 0)
//!  stream<CreditMsg>        |                                                      | --> queue : signal<u16>
//!  (tx.cbfc)                |                                                      |     (frames waiting, a level)
//!  mul_available -(comb)--> |                                                      |
//!  signal<u8> (mac_credit)  |                                                      |
//!  take ====(comb, 1)=====> | process 1: the head was granted: out of the queue;   |
//!  stream<Type2Take>        |   process 0 offers the next one next cycle           |
//!  (vc_queues, process 1)   +------------------------------------------------------+
//! ```
//!
//! **Timing.** A segment pushed at n (the core's process 0, in seg order with TYPE1's) is in
//! the offer the core's round of n reads; a return's count at n moves the offer at n; a take
//! at n (the core's process 2) leaves the queue at n and the next head is offered at n + 1,
//! when the core's next round can use it (one grant per cycle). The core keeps the queue's
//! room itself (the frames it pushed less those it took), as a producer keeps a FIFO's
//! credits, so it never pushes into a full queue. The charge of a granted frame goes from the
//! core to the controller (`tx.cbfc`), which tells this node each member's new count
//! (`charged`, for the next round).
//!
//! **Counter** (in the TX's scope): `type2_queue_peak`. The core counts the rest of TYPE2's
//! (`type2_frames_sent`, `type2_credit_block`, `type2_mac_block`, …) where its round consults
//! the offer. **Waves**: `type2.queue`, `type2.offer.*`.
//!
//! **Deviations.** The queue holds `queue` frames (default 16, the TYPE2 OST of seed 002's
//! «RC Link 资源»); a frame with more than 255 packets, to an unknown group, for another LG, or
//! with a packet no ledger can ever admit is a protocol violation (dropped).

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, In, Out, PortDecl, StreamIn, Wake,
};
use hwsim_ports::{mcast_group, ChipId, CreditMsg, LgId, Segment, Type2Block, Type2Offer, Type2Take, TYPE2_VC};
use serde::{Deserialize, Serialize};

use super::cbfc::{self, Cbfc};

/// The counters this block registers (name, unit, meaning); in `rclink_tx` the node counts in
/// the TX's scope.
pub const COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "type2_queue_peak",
    "frames",
    "the most TYPE2 segments waiting in the TYPE2 queue at once",
)];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters: the TX's TYPE2 figures (seed 002 «RC Link 资源»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id.
    pub chip: ChipId,
    /// This link group's index, 0..=7 (segments for another LG are misrouted).
    pub lg: LgId,
    /// Largest packet payload MAX_PAYLOAD, bytes, 1..=65535.
    pub max_payload: u32,
    /// Bytes per CBFC credit: 32, 64, 128, 256, 1024 or 2048.
    pub credit_size: u32,
    /// Per-packet header overhead in the cost, bytes, 0..=511.
    pub pkt_ovhd: u32,
    /// CREDIT_UF_LIMIT, credits kept in reserve, 1..=7.
    pub uf_limit: u32,
    /// Initial TYPE2 CBFC credits per member, uf_limit+1..=32767 (seed 002: 2048).
    pub type2_credits: u32,
    /// software_ctrl_cbfc_vc_status: bit 4 = 0 stops TYPE2 (default 0xFF).
    pub vc_enable: u8,
    /// stop_cbfc_en: CBFC off altogether (default false).
    pub stop_cbfc: bool,
    /// Multicast groups by group id: the member chips.
    pub groups: Vec<Vec<ChipId>>,
    /// Frames the queue holds, 1..=256 (default 16, the TYPE2 OST).
    pub queue: u32,
}

impl Default for Params {
    fn default() -> Self {
        let c = cbfc::Params::default();
        Params {
            chip: 0,
            lg: 0,
            max_payload: c.max_payload,
            credit_size: c.credit_size,
            pkt_ovhd: c.pkt_ovhd,
            uf_limit: c.uf_limit,
            type2_credits: c.type2_credits,
            vc_enable: c.vc_enable,
            stop_cbfc: c.stop_cbfc,
            groups: Vec::new(),
            queue: 16,
        }
    }
}

impl Params {
    /// The same figures as the CBFC controller's parameters (one check, one rule).
    fn cbfc(&self) -> cbfc::Params {
        cbfc::Params {
            chip: self.chip,
            lg: self.lg,
            credit_size: self.credit_size,
            pkt_ovhd: self.pkt_ovhd,
            uf_limit: self.uf_limit,
            vc_enable: self.vc_enable,
            stop_cbfc: self.stop_cbfc,
            max_payload: self.max_payload,
            type2_credits: self.type2_credits,
            groups: self.groups.clone(),
            ..cbfc::Params::default()
        }
    }

    /// Refuses out-of-range parameters naming the parameter; returns the TYPE2 send rule with
    /// its ledgers, full.
    fn rule(&self) -> Result<Cbfc, String> {
        if self.queue == 0 || self.queue > 256 {
            return Err(format!("queue = {}: must be in 1..=256", self.queue));
        }
        cbfc::type2_rule(&self.cbfc())
    }

    /// The check alone (the registry's).
    pub fn check(&self) -> Result<(), String> {
        self.rule().map(|_| ())
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<Segment>("seg", p.queue.clamp(1, 256))
            .doc("TYPE2 segments from the slot FIFO in the cycle it takes them; it never pushes into a full queue"),
        PortDecl::comb_stream_in::<CreditMsg>("counts", cbfc::RETURNS_PER_CYCLE)
            .optional()
            .doc("a TYPE2 ledger's count after a return, in its cycle (cbfc.t2_counts); unbound: none"),
        PortDecl::stream_in::<CreditMsg>("charged", cbfc::charged_depth(&p.cbfc()))
            .optional()
            .doc("each member ledger's count after a grant's charge, for the next round (cbfc.t2_charged)"),
        PortDecl::comb_input::<u8>("mul_available")
            .doc("multicast MAC TX credits free this cycle (mac_credit.mul_available)"),
        PortDecl::comb_stream_in::<Type2Take>("take", 1)
            .process(1)
            .doc("the VC queues granted the head frame, in the cycle of the grant"),
        PortDecl::comb_output::<Type2Offer>("offer")
            .doc("the head frame, whether both gates pass and why not, its cost per member ledger"),
        PortDecl::output::<u16>("queue")
            .level()
            .doc("TYPE2 frames waiting for their gates"),
    ]
}

/// The node.
pub struct Type2Node {
    p: Params,
    rule: Cbfc,
    /// Per group, the ledger of each member.
    ledgers: Vec<Vec<u32>>,
    q: VecDeque<Segment>,
    returns: u8,
    seg: StreamIn<Segment>,
    counts: StreamIn<CreditMsg>,
    charged: StreamIn<CreditMsg>,
    mul_available: In<u8>,
    take: StreamIn<Type2Take>,
    offer: CombOut<Type2Offer>,
    queue: Out<u16>,
    c_peak: CounterId,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let mut rule = p.rule()?;
    let ledgers = p
        .groups
        .iter()
        .map(|g| g.iter().map(|&m| rule.ledger(m, TYPE2_VC) as u32).collect())
        .collect();
    Ok(Box::new(Type2Node {
        p: p.clone(),
        rule,
        ledgers,
        q: VecDeque::with_capacity(p.queue as usize),
        returns: 0,
        seg: b.stream_in("seg")?,
        counts: b.stream_in("counts")?,
        charged: b.stream_in("charged")?,
        mul_available: b.input("mul_available")?,
        take: b.stream_in("take")?,
        offer: b.comb_output("offer")?,
        queue: b.output("queue")?,
        c_peak: b.counter("type2_queue_peak"),
    }))
}

impl Type2Node {
    /// Why segment `seg` can never be sent here, if it cannot.
    fn unsendable(&self, seg: &Segment) -> Option<String> {
        let group = mcast_group(seg.dst).map(usize::from);
        let cost = self.rule.cost(seg.bytes.min(self.p.max_payload));
        if seg.lg != self.p.lg {
            Some(format!("for LG {}, this is LG {}", seg.lg, self.p.lg))
        } else if group.is_none_or(|g| g >= self.ledgers.len()) {
            Some(format!(
                "a TYPE2 segment to {:#06x}, not a group in `groups` ({} groups)",
                seg.dst,
                self.ledgers.len()
            ))
        } else if seg.bytes.div_ceil(self.p.max_payload) > u8::MAX as u32 {
            Some(format!("{} bytes: more than 255 packets", seg.bytes))
        } else if cost > self.rule.max_packet_cost() {
            Some(format!(
                "a packet costs {cost} credits, never sendable with type2_credits = {}",
                self.p.type2_credits
            ))
        } else {
            None
        }
    }

    /// The segments pushed this cycle, into the queue.
    fn take_segments(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(seg) = self.seg.pop() {
            if let Some(why) = self.unsendable(&seg) {
                ctx.violation(format!("segment {seg:?}: {why}"));
                continue;
            }
            if self.q.len() >= self.p.queue as usize {
                ctx.violation(format!("segment {seg:?}: pushed into a full TYPE2 queue"));
                continue;
            }
            self.q.push_back(seg);
            if self.q.len() as u64 > ctx.counter(self.c_peak) {
                ctx.set_counter(self.c_peak, self.q.len() as u64);
            }
        }
    }

    /// The head's gates: a multicast MAC TX credit, then every member's ledger admits all its
    /// packets (both, «两者均通过才允许发送»).
    fn offer_now(&self) -> Type2Offer {
        let mut o = Type2Offer {
            queued: self.q.len() as u16,
            returns: self.returns,
            ..Type2Offer::default()
        };
        let Some(&seg) = self.q.front() else {
            return o;
        };
        o.head = seg;
        if self.mul_available.get() == 0 {
            o.block = Type2Block::Mac;
            return o;
        }
        let mp = self.p.max_payload;
        let npkts = seg.bytes.div_ceil(mp).max(1);
        let payloads = |i: u32| (seg.bytes - i * mp).min(mp);
        let g = mcast_group(seg.dst).expect("checked at intake") as usize;
        for &l in &self.ledgers[g] {
            let (k, c) = self.rule.run(l as usize, (0..npkts).map(payloads));
            if k < npkts {
                o.block = Type2Block::Credit;
                o.cost = 0;
                return o;
            }
            o.cost = c;
        }
        o
    }
}

impl Component for Type2Node {
    /// Process 0: the ledgers' counts, the segments, the offer.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(m) = self.charged.pop() {
            self.rule.set_remaining(m.dst, m.vc, m.credits as u32);
        }
        while let Some(m) = self.counts.pop() {
            self.rule.set_remaining(m.dst, m.vc, m.credits as u32);
            self.returns = self.returns.wrapping_add(1);
        }
        self.take_segments(ctx);
        self.offer.set(self.offer_now());
        self.queue.update(self.q.len() as u16);
        Wake::OnInput
    }

    /// Process 1: the grant of the head.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(t) = self.take.pop() {
            match self.q.front() {
                Some(h) if h.txn == t.txn && h.frame_seq == t.frame_seq => {
                    self.q.pop_front();
                }
                h => {
                    ctx.violation(format!("type2: a take of {t:?}, but the head is {h:?}"));
                    return Wake::OnInput;
                }
            }
            // The next head is offered next cycle (the offer is read before the grant).
            ctx.run_process(0);
        }
        // A second write in the cycle when process 0 ran (`update` compares with the committed
        // value, not with this cycle's).
        self.queue.set(self.q.len() as u16);
        Wake::OnInput
    }
}
