//! One direction of a chip-to-chip edge (seed 000 «物理链路模型»): the REQ queue (data), the RSP
//! queue (ACK/NAK/CNP) and the MAC credit-return side channel.
//!
//! ```text
//!   req_in : stream<DataFrame> ==>[ REQ: busy_until + wire/bw + base ]==> req_out
//!   rsp_in : stream<Ctrl>      ==>[ RSP: busy_until + wire/bw + base ]==> rsp_out
//!   cr_in  : stream<CreditMsg> ==>[ base latency only               ]==> cr_out
//!   pfc_in : stream<PfcFrame>  ==>[ base latency only               ]==> pfc_out   (optional)
//! ```
//! Each queue: T = max(0, busy_until − now) + wire_bytes / bandwidth + base_latency
//! (`eq:rc-link-delay`) + pipeline_latency, with the fractional busy-until carried exactly; the
//! two queues are independent, so an ACK never waits behind data. Credit returns see only the
//! propagation delay (+ pipeline_latency). `pipeline_latency` is the MAC/PCS/FEC pipeline of
//! both ends (seed 002 gives only the end-to-end minimum, 150 ns AXI-to-AXI on an idle P2P link;
//! configs/sg2262.yaml sets it, with the PAXI's `tx_latency`, to meet that figure: hwsim's split). A message popped at cycle n (it was pushed upstream at n−1) is delivered at
//! ceil(max(n, busy) + wire/bw) + base.
//! PFC frames (`pfc: true`, which the system builder sets when the switches run PFC) are
//! MAC control frames and, like credit returns, see only the propagation and pipeline delay.
//! Counters: `req_frames`, `req_wire_bytes`, `rsp_msgs`, `credit_msgs`, `pfc_frames`,
//! `req_backlog_peak`.
//!
//! Fault injection (seed 000 «Go-Back-N 重传»): `faults` rules act on what enters the link. A
//! lost or corrupted data packet is marked in the frame's `lost` mask; the receiver's MAC discards
//! it (bad FCS) but returns its credit, since it occupied the receive buffer (hwsim's assumption;
//! the seeds do not say how CBFC treats a packet lost on the wire). A lost ACK, NAK, CNP or credit
//! return is not delivered at all. Rules: `drop` / `corrupt` a data packet with a given PSN (the
//! first `times` times it passes), or every matching unit with `probability` (seeded per link),
//! or the first `times` matching units; `flap`: everything entering in [from, to) is lost.
//! Counters `fault_data_pkts`, `fault_ctrl_msgs`, `fault_credit_msgs`; the signal `injected`
//! counts every injection (traced).

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, PortDecl, StreamIn, StreamOut, Value, Wake,
};
use hwsim_ports::{ByteRate, CreditMsg, Ctrl, DataFrame, PfcFrame, Psn, QpId, SerializerClock};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "fault_data_pkts",
        "packets",
        "data packets marked lost or corrupted by a fault rule as they enter the REQ queue",
    ),
    CounterDecl::new(
        "fault_ctrl_msgs",
        "messages",
        "ACK/NAK/CNP messages dropped by a fault rule (never delivered)",
    ),
    CounterDecl::new(
        "fault_credit_msgs",
        "messages",
        "credit returns dropped by a fault rule (never delivered)",
    ),
    CounterDecl::new(
        "pfc_frames",
        "frames",
        "PFC frames carried (propagation and pipeline delay only; `pfc: true`)",
    ),
    CounterDecl::new("req_frames", "frames", "data frames taken into the REQ queue"),
    CounterDecl::new(
        "req_wire_bytes",
        "bytes",
        "wire bytes of the data frames taken into the REQ queue",
    ),
    CounterDecl::new(
        "rsp_msgs",
        "messages",
        "ACK/NAK/CNP messages taken into the RSP queue (faults excluded)",
    ),
    CounterDecl::new(
        "credit_msgs",
        "messages",
        "MAC credit returns carried on the side channel (faults excluded)",
    ),
    CounterDecl::new(
        "req_backlog_peak",
        "frames",
        "gauge: most data frames in flight in the REQ queue at once",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// What a fault hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultTarget {
    /// Data packets (REQ).
    #[default]
    Data,
    /// Cumulative ACKs (RSP).
    Ack,
    /// NAKs (RSP).
    Nak,
    /// CNPs (RSP).
    Cnp,
    /// Credit returns (side channel).
    Credit,
}

/// How it hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Lost on the wire.
    #[default]
    Drop,
    /// Arrives with a bad FCS and is discarded by the receiver.
    Corrupt,
    /// Total loss of everything entering in [from, to).
    Flap,
}

/// One fault rule of a link direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultRule {
    /// drop | corrupt | flap.
    pub kind: FaultKind,
    /// data | ack | nak | cnp | credit (ignored by flap).
    pub what: FaultTarget,
    /// Only this link group.
    pub lg: Option<u8>,
    /// Only this QP.
    pub qp: Option<QpId>,
    /// Only this PSN (data: the packet's; ACK/NAK: the ack_psn).
    pub psn: Option<Psn>,
    /// Hits at most this many times (a PSN rule: the first `times` passes); default 1. Ignored
    /// with `probability`.
    pub times: Option<u64>,
    /// Each matching packet or message is hit with this probability.
    pub probability: Option<f64>,
    /// Window start (flap; or limits any rule).
    pub from: Option<u64>,
    /// Window end, exclusive.
    pub to: Option<u64>,
}

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Edge bandwidth per queue, bytes/ns (400).
    pub bandwidth: ByteRate,
    /// Propagation (base) latency, ns (25), 0..=10^9.
    pub base_latency: u64,
    /// Fixed pipeline of the MAC, PCS and FEC at both ends of the edge (TX encode + RX decode),
    /// ns, 0..=10^9, added to every message (data, control and credit returns all cross the PHY).
    /// 0 here; the chip preset sets it so that an idle P2P write takes the seed's 150 ns.
    pub pipeline_latency: u64,
    /// Fault injection rules (none by default).
    pub faults: Vec<FaultRule>,
    /// Carry PFC frames (`pfc_in` / `pfc_out`): PFC mode, set by the system builder.
    pub pfc: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            bandwidth: ByteRate::new(400, 1).expect("400 B/ns"),
            base_latency: 25,
            pipeline_latency: 0,
            faults: Vec::new(),
            pfc: false,
        }
    }
}

/// A rule with its hit count.
struct Armed {
    rule: FaultRule,
    hits: u64,
}

impl Armed {
    /// Whether this rule hits a unit with these fields entering at `now`; draws from `rng` only
    /// for probabilistic rules, one draw per matching unit (so event skip changes nothing).
    fn hits(&mut self, now: u64, target: FaultTarget, key: (u8, QpId, Psn), rng: &mut hwsim_hw::Rng) -> bool {
        let (lg, qp, psn) = key;
        let r = &self.rule;
        let in_window = r.from.is_none_or(|f| now >= f) && r.to.is_none_or(|t| now < t);
        if !in_window {
            return false;
        }
        if r.kind == FaultKind::Flap {
            self.hits += 1;
            return true;
        }
        if r.what != target
            || r.lg.is_some_and(|l| l != lg)
            || r.qp.is_some_and(|q| q != qp)
            || r.psn.is_some_and(|p| p != psn)
        {
            return false;
        }
        let hit = match r.probability {
            Some(p) => rng.chance(p),
            None => self.hits < r.times.unwrap_or(1),
        };
        if hit {
            self.hits += 1;
        }
        hit
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::output::<u32>("injected").doc("faults injected so far"),
        PortDecl::stream_in::<DataFrame>("req_in", 4).doc("data frames entering the edge"),
        PortDecl::stream_in::<Ctrl>("rsp_in", 4).doc("ACK/NAK/CNP entering the edge"),
        PortDecl::stream_in::<CreditMsg>("cr_in", 4).doc("credit returns entering the edge"),
        PortDecl::stream_out::<DataFrame>("req_out").doc("data frames at the far end"),
        PortDecl::stream_out::<Ctrl>("rsp_out").doc("ACK/NAK/CNP at the far end"),
        PortDecl::stream_out::<CreditMsg>("cr_out").doc("credit returns at the far end"),
    ];
    if p.pfc {
        v.push(
            PortDecl::stream_in::<PfcFrame>("pfc_in", 4)
                .optional()
                .doc("PFC frames entering the edge (PFC mode)"),
        );
        v.push(PortDecl::stream_out::<PfcFrame>("pfc_out").doc("PFC frames at the far end"));
    }
    v
}

/// A delay line feeding one output: (delivery cycle, message), in delivery order.
struct Lane<T: Value> {
    input: StreamIn<T>,
    out: StreamOut<T>,
    flight: VecDeque<(Cycle, T)>,
}

impl<T: Value> Lane<T> {
    /// Delivers the due head (one per cycle); returns the next cycle this lane needs, if any.
    fn deliver(&mut self, now: Cycle) -> Option<Cycle> {
        if let Some(&(due, _)) = self.flight.front() {
            if due <= now && self.out.can_push() {
                let (_, m) = self.flight.pop_front().expect("front");
                self.out.push(m);
            }
        }
        match self.flight.front() {
            Some(&(due, _)) if due > now => Some(due),
            // Due now but this cycle's push is used or the far end is full: next cycle if it
            // will have room, else its pop wakes us.
            Some(_) if self.out.space() > 1 => Some(now + 1),
            _ => None,
        }
    }
}

/// The block.
pub struct PhyLink {
    base: u64,
    req_clock: SerializerClock,
    rsp_clock: SerializerClock,
    req: Lane<DataFrame>,
    rsp: Lane<Ctrl>,
    cr: Lane<CreditMsg>,
    pfc: Option<Lane<PfcFrame>>,
    c_pfc: CounterId,
    c_req: CounterId,
    c_req_bytes: CounterId,
    c_rsp: CounterId,
    c_cr: CounterId,
    c_backlog: CounterId,
    faults: Vec<Armed>,
    injected: hwsim_hw::Out<u32>,
    injected_n: u32,
    c_fault_data: CounterId,
    c_fault_ctrl: CounterId,
    c_fault_credit: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    // Bounded so that `now + latency` can never wrap (a run is far shorter than 2^63 ns).
    for (name, v) in [
        ("base_latency", p.base_latency),
        ("pipeline_latency", p.pipeline_latency),
    ] {
        if v > 1_000_000_000 {
            return Err(format!("{name} = {v}: must be in 0..=1000000000 ns"));
        }
    }
    for (i, f) in p.faults.iter().enumerate() {
        if let Some(pr) = f.probability {
            if !(0.0..=1.0).contains(&pr) {
                return Err(format!("faults[{i}]: probability {pr} out of range 0..=1"));
            }
        }
        if f.kind == FaultKind::Flap && (f.from.is_none() || f.to.is_none()) {
            return Err(format!("faults[{i}]: a flap needs `from` and `to`"));
        }
    }
    Ok(Box::new(PhyLink {
        faults: p
            .faults
            .iter()
            .map(|r| Armed {
                rule: r.clone(),
                hits: 0,
            })
            .collect(),
        injected: b.output("injected")?,
        injected_n: 0,
        c_fault_data: b.counter("fault_data_pkts"),
        c_fault_ctrl: b.counter("fault_ctrl_msgs"),
        c_fault_credit: b.counter("fault_credit_msgs"),
        base: p.base_latency + p.pipeline_latency,
        req_clock: SerializerClock::new(p.bandwidth),
        rsp_clock: SerializerClock::new(p.bandwidth),
        req: Lane {
            input: b.stream_in("req_in")?,
            out: b.stream_out("req_out")?,
            flight: VecDeque::new(),
        },
        rsp: Lane {
            input: b.stream_in("rsp_in")?,
            out: b.stream_out("rsp_out")?,
            flight: VecDeque::new(),
        },
        cr: Lane {
            input: b.stream_in("cr_in")?,
            out: b.stream_out("cr_out")?,
            flight: VecDeque::new(),
        },
        pfc: if p.pfc {
            Some(Lane {
                input: b.stream_in("pfc_in")?,
                out: b.stream_out("pfc_out")?,
                flight: VecDeque::new(),
            })
        } else {
            None
        },
        c_pfc: b.counter("pfc_frames"),
        c_req: b.counter("req_frames"),
        c_req_bytes: b.counter("req_wire_bytes"),
        c_rsp: b.counter("rsp_msgs"),
        c_cr: b.counter("credit_msgs"),
        c_backlog: b.counter("req_backlog_peak"),
    }))
}

impl Component for PhyLink {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let injected_before = self.injected_n;
        while let Some(mut f) = self.req.input.pop() {
            for i in 0..if self.faults.is_empty() { 0 } else { f.npkts } {
                let key = (f.lg, f.qp, f.psn_of(f.first_idx + i));
                let rng = ctx.rng();
                if self.faults.iter_mut().any(|a| a.hits(now, FaultTarget::Data, key, rng)) {
                    f.lost |= 1 << i;
                    self.injected_n += 1;
                    ctx.count(self.c_fault_data, 1);
                    if ctx.logs() {
                        ctx.log(
                            "drop",
                            format_args!(
                                "unit=data src={} dst={} lg={} qp={} psn={} (a fault rule: the receiver's MAC discards it)",
                                f.src,
                                f.dst,
                                key.0,
                                key.1.value(),
                                key.2.value()
                            ),
                        );
                    }
                }
            }
            let wire = f.wire_bytes() as u64;
            let due = self.req_clock.start(now, wire) + self.base;
            self.req.flight.push_back((due, f));
            ctx.count(self.c_req, 1);
            ctx.count(self.c_req_bytes, wire);
        }
        let backlog = self.req.flight.len() as u64;
        if backlog > ctx.counter(self.c_backlog) {
            ctx.set_counter(self.c_backlog, backlog);
        }
        while let Some(m) = self.rsp.input.pop() {
            if !self.faults.is_empty() {
                let target = if m.is_cnp() {
                    FaultTarget::Cnp
                } else if m.is_nak() {
                    FaultTarget::Nak
                } else {
                    FaultTarget::Ack
                };
                let key = (m.lg, m.rh.qp(), m.rh.psn());
                let rng = ctx.rng();
                if self.faults.iter_mut().any(|a| a.hits(now, target, key, rng)) {
                    self.injected_n += 1;
                    ctx.count(self.c_fault_ctrl, 1);
                    if ctx.logs() {
                        let unit = match target {
                            FaultTarget::Cnp => "cnp",
                            FaultTarget::Nak => "nak",
                            _ => "ack",
                        };
                        ctx.log(
                            "drop",
                            format_args!(
                                "unit={unit} src={} dst={} lg={} qp={} psn={} (a fault rule: never delivered)",
                                m.src,
                                m.dst,
                                key.0,
                                key.1.value(),
                                key.2.value()
                            ),
                        );
                    }
                    continue;
                }
            }
            let due = self.rsp_clock.start(now, m.wire_bytes as u64) + self.base;
            self.rsp.flight.push_back((due, m));
            ctx.count(self.c_rsp, 1);
        }
        while let Some(m) = self.cr.input.pop() {
            if !self.faults.is_empty() {
                let rng = ctx.rng();
                if self
                    .faults
                    .iter_mut()
                    .any(|a| a.hits(now, FaultTarget::Credit, (m.lg, QpId::default(), Psn::ZERO), rng))
                {
                    self.injected_n += 1;
                    ctx.count(self.c_fault_credit, 1);
                    if ctx.logs() {
                        ctx.log(
                            "drop",
                            format_args!(
                                "unit=credit src={} dst={} lg={} vc={} credits={} (a fault rule: never delivered)",
                                m.src, m.dst, m.lg, m.vc, m.credits
                            ),
                        );
                    }
                    continue;
                }
            }
            self.cr.flight.push_back((now + self.base, m));
            ctx.count(self.c_cr, 1);
        }
        if let Some(pfc) = self.pfc.as_mut() {
            while let Some(m) = pfc.input.pop() {
                pfc.flight.push_back((now + self.base, m));
                ctx.count(self.c_pfc, 1);
            }
        }
        if self.injected_n != injected_before {
            self.injected.set(self.injected_n);
        }
        Wake::earliest(
            [
                self.req.deliver(now),
                self.rsp.deliver(now),
                self.cr.deliver(now),
                self.pfc.as_mut().and_then(|l| l.deliver(now)),
            ]
            .into_iter()
            .flatten(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::Rh;

    fn harness() -> Harness {
        let p = Params::default();
        Harness::new("phylink", ports(&p), Box::new(move |b| build(&p, b)), 1, 8).unwrap()
    }

    fn frame(bytes: u32) -> DataFrame {
        DataFrame {
            qp: QpId::new(1).unwrap(),
            ..DataFrame::whole(bytes, 1344, 50)
        }
    }

    fn run_until_out(h: &mut Harness, n: usize) -> Vec<(u64, &'static str)> {
        let mut got = Vec::new();
        for _ in 0..400 {
            let now = h.now();
            h.step().unwrap();
            while h.pop::<DataFrame>("req_out").is_some() {
                got.push((now, "req"));
            }
            while h.pop::<Ctrl>("rsp_out").is_some() {
                got.push((now, "rsp"));
            }
            while h.pop::<CreditMsg>("cr_out").is_some() {
                got.push((now, "cr"));
            }
            if got.len() >= n {
                break;
            }
        }
        got
    }

    #[test]
    fn full_frame_takes_wire_over_bandwidth_plus_base() {
        let mut h = harness();
        assert!(h.push("req_in", frame(4096)));
        // Pushed during cycle 0, popped at 1: 1 + 4296/400 = 11.74 → 12, + 25 = 37.
        let got = run_until_out(&mut h, 1);
        assert_eq!(got, vec![(37, "req")]);
    }

    #[test]
    fn ack_does_not_wait_behind_data_and_credit_is_propagation_only() {
        let mut h = harness();
        for _ in 0..3 {
            assert!(h.push("req_in", frame(4096)));
            h.step().unwrap();
        }
        let ack = Ctrl {
            rh: Rh::ack(QpId::new(1).unwrap(), Psn::ZERO),
            wire_bytes: 50,
            ..Default::default()
        };
        assert!(h.push("rsp_in", ack));
        assert!(h.push(
            "cr_in",
            CreditMsg {
                credits: 6,
                ..Default::default()
            }
        ));
        let got = run_until_out(&mut h, 5);
        // The ACK popped at 4: 4 + 50/400 → 5, + 25 = 30; the credit 4 + 25 = 29; the three data
        // frames serialize back to back: 12, 22.74 → 23, 33.48 → 34 (+25).
        assert_eq!(
            got,
            vec![(29, "cr"), (30, "rsp"), (37, "req"), (48, "req"), (59, "req")]
        );
    }
}
