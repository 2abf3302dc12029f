//! RC Link RX PSN check of one link group: the per-window EPSN check with its three outcomes,
//! FACK, credit return and ECN → CNP (seed 000 «RX 侧设计»: «PSN 校验与三种结果», «FACK»,
//! «credit 返还», «ECN 检测与 CNP 生成»; appendix C «RX 参数»; SPEC.md «RX side»). It is the
//! first half of `rclink_rx` (rx.rs), which calls this core inside its own tick; the block
//! `psn_check` is the same core alone, for module-by-module comparison with the RTL.
//!
//! ```text
//!                              +-------------------------------------------+
//!  data : stream<DataFrame> ==>| PSN check per (src, qp) against EPSN      |==> ctrl : stream<Ctrl>
//!  (capacity 8, from rx_cap)   |  accept -> `accepted`, CNP if CE          |    NAK / FACK ACK / CNP
//!                              |  gap    -> NAK (one per gap), drop        |    (/ dup re-ACK)
//!                              |  dup    -> drop (or re-ACK, `duplicate`)  |==> credit : stream<CreditMsg>
//!                              |  every data packet -> credit return       |    CBFC returns (MAC path)
//!                              |  zero-byte (FACK) -> immediate ACK        |==> accepted : stream<RxAccepted>
//!                              |                                           |    to ACK MERGE
//!                              |  state: src, qp, epsn, nak_pending,       |--> (signals, below)
//!                              |         credits_due                       |
//!                              +-------------------------------------------+
//! ```
//!
//! **PSN check**, per packet `i` of an arriving frame, in order (PSN `frame.psn_of(i)`, payload
//! `frame.pkt_bytes(i)`), against the EPSN of `(frame.src, frame.qp)` (starting at 0; one
//! instance per LG, so this is the seed's `(src_chip, lg_id, qp_id)` window):
//!
//! | condition                  | result        | action                                             |
//! |----------------------------|---------------|----------------------------------------------------|
//! | payload 0 (FACK / tcredit) | immediate ACK | EPSN++ if `psn == EPSN`; ACK `ack_psn = EPSN` now, |
//! |                            |               | bypassing ACK MERGE; no credit, no CNP             |
//! | `psn == EPSN`              | accept        | EPSN++, deliver, to ACK MERGE, credit, CNP if CE   |
//! | `psn` after EPSN (ring)    | gap           | NAK `ack_psn = EPSN` (once per gap), drop, credit  |
//! | `psn` before EPSN (ring)   | duplicate     | drop silently (`duplicate: drop`, the seed) or     |
//! |                            |               | re-ACK `ack_psn = EPSN` (`duplicate: ack`); credit |
//!
//! All three data paths return credit («三条路径都返还 credit»): the packet used receive buffer
//! whatever its PSN, and a path that kept it would leak credit until the sender deadlocks.
//!
//! **TYPE2** (a multicast copy, PAXI kind `Mul`; seed 002: TYPE2 has no Go-Back-N): no window,
//! no check, no ACK, no CNP. Each packet's credit returns on the TYPE2 VC (`CreditMsg.vc` 4),
//! lost ones too; the frame is delivered when its last packet arrives and none before it went
//! missing (its packets arrive back to back from one source), otherwise it is dropped
//! (`type2_dropped`). `type2_frames` counts the TYPE2 frames delivered.
//!
//! **To ACK MERGE**: one [`RxAccepted`] per arrival that accepted data packets or was answered
//! at once (FACK, dup re-ACK): `{src, qp, epsn after the arrival, npkts accepted, immediate_ack}`.
//!
//! **Credit return**: `ceil((payload + pkt_ovhd) / credit_size)` per data packet (the TX's CBFC
//! cost, `cbfc_cost`), due `credit_return_delay` cycles after the arrival, per `(src, vc = qp &
//! 3)`. Everything due in one cycle for one `(src, vc)` leaves as one [`CreditMsg`] `{src: chip,
//! dst: frame.src, lg, vc, credits}` (split if above the 15-bit credit field).
//!
//! **ECN → CNP** (kept here, next to the window state it uses, until the CNP MERGE / DCQCN work
//! moves it): an accepted data packet marked CE emits a CNP `{rh: Rh::cnp(qp), wire_bytes:
//! cnp_bytes}` if no CNP was sent for its `(src, qp)` in the last `cnp_interval` cycles (`now −
//! last_cnp ≥ cnp_interval`, or never). Zero-byte packets and dropped packets never trigger one.
//!
//! **Timestamps**: every ACK, NAK and CNP made here echoes the RH timestamp of the data packet
//! that caused it (seed 002: RTT via the RH Timestamp), so the sender can time the round trip.
//!
//! **State on the waves** (true widths): `src` (16) / `qp` (10) of the window the last arrival
//! touched, its `epsn` (12), `nak_pending` (1: a NAK was sent for this EPSN and no resend has
//! moved it yet), `credits_due` (16: credits queued for return, not yet pushed). In `rclink_rx`
//! the same signals appear as `psn_check.*`.
//!
//! **Latency** (arrival = the cycle the frame is visible on `data`, popped at once): NAK, FACK
//! ACK, dup re-ACK, CNP and `accepted` are pushed in the arrival cycle (seen one cycle later)
//! if their stream is free; credits at arrival + `credit_return_delay`. Each output stream takes
//! one push per cycle; what is generated together queues in generation order.
//!
//! **Counters** (events, never ticks): `rx_frames`, `rx_pkts` (all packets checked, FACKs
//! included), `lost_pkts` (discarded by the MAC before the check), `rx_payload_bytes` (accepted
//! payload), `dup_pkts`, `ooo_pkts` (after EPSN, NAKed or not), `naks_sent`, `fack_acks`,
//! `dup_acks` (re-ACKs under `duplicate: ack`), `cnps_sent`, `credits_returned` (credits pushed),
//! `first_byte_at` / `last_byte_at` (cycle + 1 of the first / last accepted payload; 0 = none),
//! `data_latency_max` (arrival − the sender MAC's `sent_at`, data frames only).
//!
//! **Deviations and choices** (the seed is silent or frame-granular):
//! - Arrival: in a chip the RX cap hands over one packet at a time, when its last byte is in
//!   (the seed's per-packet arrival). A frame of several packets (a module testbench may drive
//!   one) is checked packet by packet in its arrival cycle, so their credit, CNP and ACK MERGE
//!   times are that cycle.
//! - One NAK per gap: after a NAK for EPSN `e`, further out-of-order packets produce no NAK until
//!   EPSN moves (still dropped, still credited; counter `ooo_pkts`). Every packet in flight
//!   behind a loss would otherwise NAK the same PSN and make the sender rewind again and again.
//!   If that NAK or the resend is lost, the sender's RETRY_TIMEOUT recovers.
//! - A FACK's immediate ACK is cumulative (`ack_psn = EPSN`), so it also covers what ACK MERGE
//!   holds (`immediate_ack`). A FACK not at EPSN is not accepted but is still answered with an
//!   ACK carrying EPSN (never a NAK).
//! - `duplicate: ack` is not in the seed (which drops duplicates silently, the default here): see
//!   docs/spec-findings.md — with cumulative ACKs, one lost tail ACK otherwise ends in MAX_RETRY
//!   timeouts and a fatal QP. One re-ACK per arrival holding duplicates, not one per packet.
//! - A PSN exactly half a ring (2048) from EPSN is neither before nor after it; it is treated as a
//!   duplicate (dropped, no NAK).
//! - `pkt_ovhd` for the credit cost is this block's parameter (it must equal the sender's CBFC
//!   setting), not the frame's `pkt_ovhd` field, which the RX cap uses for wire time.
//! - A frame addressed to another chip or LG, or malformed (no packets, `max_payload` 0, packets
//!   beyond the frame), is a protocol violation: the run stops naming this instance.

use std::collections::{BTreeMap, VecDeque};

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, In, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{
    cbfc_cost, mcast_group, ChipId, CreditCount, CreditMsg, CreditSize, DataFrame, Ecn, FlitKind, LgId, Psn, QpId, Rh,
    RxAccepted, RxCtrl,
};
use serde::{Deserialize, Serialize};

use super::rx_ctrl::{hand_over, CtrlKind, CtrlQueue, RxSource, CHECK_WRITES};
use super::tx::TYPE2_VC;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new("rx_frames", "frames", "frames taken in on `data` and checked"),
    CounterDecl::new(
        "lost_pkts",
        "packets",
        "packets the MAC discarded before the check (credit still returned)",
    ),
    CounterDecl::new(
        "data_latency_max",
        "ns",
        "longest data-path latency: arrival − the sender MAC's `sent_at`",
    ),
    CounterDecl::new(
        "rx_pkts",
        "packets",
        "packets checked, FACKs and TYPE2 included, lost ones not",
    ),
    CounterDecl::new("rx_payload_bytes", "bytes", "payload bytes of the packets accepted"),
    CounterDecl::new("dup_pkts", "packets", "duplicates (PSN before EPSN), dropped"),
    CounterDecl::new(
        "ooo_pkts",
        "packets",
        "out-of-order packets (PSN after EPSN), dropped, NAKed or not",
    ),
    CounterDecl::new("credits_returned", "credits", "CBFC credits pushed on `credit`"),
    CounterDecl::new(
        "first_byte_at",
        "cycle",
        "cycle + 1 of the first accepted payload (0 = none)",
    ),
    CounterDecl::new(
        "last_byte_at",
        "cycle",
        "cycle + 1 of the last accepted payload (0 = none)",
    ),
    CounterDecl::new("type2_frames", "frames", "TYPE2 (multicast) frames delivered whole"),
    CounterDecl::new(
        "type2_dropped",
        "frames",
        "TYPE2 frames dropped: a packet of theirs went missing",
    ),
    CounterDecl::new(
        "deliver_peak",
        "frames",
        "the most frames waiting at once for `deliver` (0 without `deliver`)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// What the PSN check does with a duplicate (a PSN before EPSN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplicate {
    /// Drop it silently (seed 000 «PSN 校验与三种结果»; the default).
    #[default]
    Drop,
    /// Drop it and answer the arrival with a cumulative ACK `ack_psn = EPSN` at once, as RDMA
    /// receivers do, so a sender whose ACK was lost learns its data arrived.
    Ack,
}

/// Parameters of one PSN check (one per chip and LG); defaults from seed 000 appendix C.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (the `src` of every ACK/NAK/CNP/credit it sends; frames must be for it).
    pub chip: ChipId,
    /// This instance's link group (frames must carry it), 0..=7.
    pub lg: LgId,
    /// Per-packet header bytes in the credit cost (the sender's CBFC overhead), default 50.
    pub pkt_ovhd: u32,
    /// Bytes per CBFC credit: 32, 64, 128, 256, 1024 or 2048; default 256.
    pub credit_size: CreditSize,
    /// CREDIT_RETURN_DELAY_NS: cycles from arrival to the credit return, default 1.
    pub credit_return_delay: u64,
    /// CNP_INTERVAL_NS: least cycles between CNPs of one (src, qp), default 2500 (the seed's spec
    /// text; its design document says 50000 — see «ECN 检测与 CNP 生成»).
    pub cnp_interval: u64,
    /// Wire bytes of an ACK or NAK (one header), default 50.
    pub ack_bytes: u16,
    /// Wire bytes of a CNP, default 64.
    pub cnp_bytes: u16,
    /// What a duplicate gets: `drop` (the seed, default) or `ack` (re-ACK with EPSN).
    pub duplicate: Duplicate,
    /// Hand every whole frame accepted to PAXI on a `deliver` stream, with PAXI's `pause`
    /// holding the credit returns (the system form sets it; off by default, when nothing above
    /// the RX is modelled).
    pub deliver: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            pkt_ovhd: 50,
            credit_size: CreditSize::B256,
            credit_return_delay: 1,
            cnp_interval: 2500,
            ack_bytes: 50,
            cnp_bytes: 64,
            duplicate: Duplicate::Drop,
            deliver: false,
        }
    }
}

/// Largest credit count in one [`CreditMsg`]: the 15-bit CBFC counter.
const CREDIT_FIELD_MAX: u32 = 0x7FFF;

/// Receive state of one `(src, qp)` window.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    /// Next expected PSN (= max contiguous PSN + 1).
    epsn: Psn,
    /// EPSN a NAK was sent for; no further NAK until EPSN moves past it.
    nak_for: Option<Psn>,
    /// Cycle of the last CNP for this window.
    last_cnp: Option<Cycle>,
}

/// What one arrival did, for the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Packets checked (FACKs included, lost ones not).
    pub pkts: u32,
    /// Packets lost on the wire (the MAC discarded them; credit still returned).
    pub lost: u32,
    /// Duplicates (before EPSN), dropped.
    pub dup: u32,
    /// Out-of-order packets (after EPSN), dropped.
    pub ooo: u32,
    /// Payload bytes accepted.
    pub accepted_bytes: u64,
    /// What ACK MERGE must hear, if anything.
    pub accepted: Option<RxAccepted>,
    /// The frame's last packet was accepted: the whole frame is delivered (its earlier packets
    /// were accepted before it, in PSN order).
    pub delivered: bool,
    /// A TYPE2 (multicast) frame: no PSN check, no ACK.
    pub type2: bool,
    /// A TYPE2 frame ended here with a packet missing: it is lost (no retransmission).
    pub type2_broken: bool,
}

/// The PSN check core: windows, credit returns; no ports. `rclink_rx` and the `psn_check` block
/// both drive it.
pub struct PsnCheck {
    src: RxSource,
    pkt_ovhd: u32,
    credit_size: CreditSize,
    credit_return_delay: u64,
    cnp_interval: u64,
    ack_bytes: u16,
    cnp_bytes: u16,
    duplicate: Duplicate,
    /// Windows by (src, qp); an entry is created once per window, never per packet.
    windows: BTreeMap<(ChipId, QpId), Window>,
    /// TYPE2 reassembly per source: the next packet index expected of the frame arriving, and
    /// whether every packet of it so far arrived (a frame's packets arrive back to back: the
    /// sender's MAC sends it whole and the switches forward it whole).
    type2: BTreeMap<ChipId, (u8, bool)>,
    /// Credit returns (due cycle, message), due cycles non-decreasing; entries of the same due
    /// cycle and (dst, vc) are summed.
    credits: VecDeque<(Cycle, CreditMsg)>,
    /// Sum of the credits in `credits` (shown as `credits_due`).
    credits_due: u32,
    /// The window the last arrival touched (shown on the waves).
    last: Option<(ChipId, QpId)>,
}

/// Why a frame cannot be checked, if it cannot.
fn malformed(f: &DataFrame, chip: ChipId, lg: LgId) -> Option<String> {
    // A TYPE2 copy keeps its group address: the routers delivered it here as a member.
    let member = f.paxi.kind == FlitKind::Mul && mcast_group(f.dst).is_some();
    if (f.dst != chip && !member) || f.lg != lg {
        return Some(format!(
            "frame for chip {} lg {} reached the RX of chip {chip} lg {lg}",
            f.dst, f.lg
        ));
    }
    if f.npkts == 0 {
        return Some("frame carries no packet".into());
    }
    if f.frame_bytes > 0 && f.max_payload == 0 {
        return Some("frame with payload has max_payload 0".into());
    }
    if u32::from(f.first_idx) + u32::from(f.npkts) > u32::from(f.frame_pkts()) {
        return Some(format!(
            "packets {}..{} beyond the frame's {}",
            f.first_idx,
            u32::from(f.first_idx) + u32::from(f.npkts),
            f.frame_pkts()
        ));
    }
    None
}

impl PsnCheck {
    /// A core with every window at EPSN 0; refuses `lg` above 7.
    pub fn new(p: &Params) -> Result<PsnCheck, String> {
        if p.lg > 7 {
            return Err(format!("lg {} out of range 0..=7", p.lg));
        }
        Ok(PsnCheck {
            src: RxSource { chip: p.chip, lg: p.lg },
            pkt_ovhd: p.pkt_ovhd,
            credit_size: p.credit_size,
            credit_return_delay: p.credit_return_delay,
            cnp_interval: p.cnp_interval,
            ack_bytes: p.ack_bytes,
            cnp_bytes: p.cnp_bytes,
            duplicate: p.duplicate,
            windows: BTreeMap::new(),
            type2: BTreeMap::new(),
            credits: VecDeque::with_capacity(64),
            credits_due: 0,
            last: None,
        })
    }

    /// Adds `credits` for `(dst, vc)` due at `due`, summed with what is already due then.
    fn add_credit(&mut self, due: Cycle, dst: ChipId, vc: u8, credits: u32) {
        self.credits_due += credits;
        // Due cycles only grow (now + a constant), so the entries of `due` are at the tail.
        for (d, m) in self.credits.iter_mut().rev() {
            if *d != due {
                break;
            }
            if m.dst == dst && m.vc == vc && u32::from(m.credits) + credits <= CREDIT_FIELD_MAX {
                m.credits += credits as u16;
                return;
            }
        }
        self.credits.push_back((
            due,
            CreditMsg {
                src: self.src.chip,
                dst,
                lg: self.src.lg,
                vc,
                credits: credits as u16,
                sent_at: 0,
            },
        ));
    }

    /// Checks every packet of the frame `f` arriving at `now`: NAK, FACK ACK, dup re-ACK and CNP
    /// go into `ctrl` in packet order; credit returns are queued. A frame that cannot be
    /// checked (see [`malformed`]) is refused with the reason.
    pub fn receive(&mut self, now: Cycle, f: &DataFrame, ctrl: &mut CtrlQueue) -> Result<Checked, String> {
        if let Some(why) = malformed(f, self.src.chip, self.src.lg) {
            return Err(format!("{why}: {f:?}"));
        }
        if f.paxi.kind == FlitKind::Mul {
            return Ok(self.receive_type2(now, f));
        }
        let key = (f.src, f.qp);
        let mut w = *self.windows.entry(key).or_default();
        let vc = f.qp.vc_bank().value();
        let due = now + self.credit_return_delay;
        let mut c = Checked::default();
        let mut npkts = 0u8;
        let mut immediate_ack = false;
        let last = f.frame_pkts() - 1;
        for i in f.first_idx..f.first_idx + f.npkts {
            let psn = f.psn_of(i);
            let bytes = f.pkt_bytes(i);
            // `lost` has a bit for each of the first 8 packets carried; later ones are never lost.
            if f.lost
                .checked_shr(u32::from(i - f.first_idx))
                .is_some_and(|b| b & 1 != 0)
            {
                // Lost or corrupted on the wire: the MAC discards it (bad FCS), so the check
                // never sees it; it occupied the receive buffer, so its credit still returns.
                c.lost += 1;
                if bytes > 0 {
                    self.add_credit(due, f.src, vc, cbfc_cost(bytes, self.pkt_ovhd, self.credit_size));
                }
                continue;
            }
            c.pkts += 1;
            if bytes == 0 {
                // FACK / tcredit: answered at once with a cumulative ACK, which also covers what
                // ACK MERGE holds; no credit (it used no data buffer), no CNP.
                if psn == w.epsn {
                    w.epsn = w.epsn.next();
                    c.delivered |= i == last;
                }
                immediate_ack = true;
                ctrl.push(
                    CtrlKind::Fack,
                    self.src
                        .ctrl(f.src, Rh::ack(f.qp, w.epsn).with_timestamp(f.ts), self.ack_bytes),
                );
                continue;
            }
            self.add_credit(due, f.src, vc, cbfc_cost(bytes, self.pkt_ovhd, self.credit_size));
            if psn == w.epsn {
                w.epsn = w.epsn.next();
                c.accepted_bytes += u64::from(bytes);
                npkts += 1;
                c.delivered |= i == last;
                if f.ecn == Ecn::Ce && w.last_cnp.is_none_or(|t| now - t >= self.cnp_interval) {
                    w.last_cnp = Some(now);
                    ctrl.push(
                        CtrlKind::Cnp,
                        self.src.ctrl(f.src, Rh::cnp(f.qp).with_timestamp(f.ts), self.cnp_bytes),
                    );
                }
            } else if psn.after(w.epsn) {
                c.ooo += 1;
                if w.nak_for != Some(w.epsn) {
                    w.nak_for = Some(w.epsn);
                    ctrl.push(
                        CtrlKind::Nak,
                        self.src
                            .ctrl(f.src, Rh::nak(f.qp, w.epsn).with_timestamp(f.ts), self.ack_bytes),
                    );
                }
            } else {
                c.dup += 1;
            }
        }
        if c.dup > 0 && self.duplicate == Duplicate::Ack {
            // The sender resent what we hold: its ACK was lost (or is late). Tell it where we are.
            immediate_ack = true;
            ctrl.push(
                CtrlKind::DupAck,
                self.src
                    .ctrl(f.src, Rh::ack(f.qp, w.epsn).with_timestamp(f.ts), self.ack_bytes),
            );
        }
        self.windows.insert(key, w);
        self.last = Some(key);
        c.accepted = (npkts > 0 || immediate_ack).then_some(RxAccepted {
            src: f.src,
            qp: f.qp,
            epsn: w.epsn,
            npkts,
            immediate_ack,
            ts: f.ts,
        });
        Ok(c)
    }

    /// A TYPE2 (multicast) frame (seed 002: «TYPE2 无 Go-Back-N 重传, 可靠性依赖 FEC»): no PSN,
    /// no window, no ACK, no CNP. Every packet returns its credit on the TYPE2 VC; the frame
    /// is delivered only whole — a lost packet loses the frame here (no retransmission), and
    /// the sender's multicast timeout reports it.
    fn receive_type2(&mut self, now: Cycle, f: &DataFrame) -> Checked {
        let due = now + self.credit_return_delay;
        let mut c = Checked {
            type2: true,
            ..Checked::default()
        };
        let last = f.frame_pkts() - 1;
        let st = self.type2.entry(f.src).or_insert((0, true));
        let mut credits = 0;
        for i in f.first_idx..f.first_idx + f.npkts {
            let bytes = f.pkt_bytes(i);
            let lost = f
                .lost
                .checked_shr(u32::from(i - f.first_idx))
                .is_some_and(|b| b & 1 != 0);
            credits += cbfc_cost(bytes, self.pkt_ovhd, self.credit_size) * u32::from(bytes > 0);
            if i == 0 {
                *st = (0, true);
            }
            // A packet missing before this one breaks the frame.
            st.1 &= i == st.0 && !lost;
            st.0 = i.saturating_add(1);
            if lost {
                c.lost += 1;
            } else {
                c.pkts += 1;
                c.accepted_bytes += u64::from(bytes);
            }
            c.delivered = i == last && st.1;
            c.type2_broken = i == last && !st.1;
        }
        if credits > 0 {
            self.add_credit(due, f.src, TYPE2_VC, credits);
        }
        c
    }

    /// The oldest credit return if it is due at `now`.
    pub fn pop_credit(&mut self, now: Cycle) -> Option<CreditMsg> {
        if self.credits.front().is_some_and(|(d, _)| *d <= now) {
            let (_, m) = self.credits.pop_front()?;
            self.credits_due -= u32::from(m.credits);
            return Some(m);
        }
        None
    }

    /// Due cycle of the oldest queued credit return.
    pub fn next_credit_due(&self) -> Option<Cycle> {
        self.credits.front().map(|(d, _)| *d)
    }

    /// EPSN of the window `(src, qp)` (0 for a window never seen).
    pub fn epsn(&self, src: ChipId, qp: QpId) -> Psn {
        self.windows.get(&(src, qp)).map_or(Psn::ZERO, |w| w.epsn)
    }

    /// The window the last arrival touched, its EPSN and whether a NAK for that EPSN is out.
    pub fn last_window(&self) -> Option<((ChipId, QpId), Psn, bool)> {
        let key = self.last?;
        let w = self.windows.get(&key)?;
        Some((key, w.epsn, w.nak_for == Some(w.epsn)))
    }

    /// Credits queued for return and not yet pushed.
    pub fn credits_due(&self) -> u32 {
        self.credits_due
    }
}

/// The PSN check's state on the waves: signals named `{prefix}src` …; `prefix` is `""` for the
/// standalone block and `"psn_check."` inside `rclink_rx`.
pub struct PsnCheckView {
    src: Out<ChipId>,
    qp: Out<QpId>,
    epsn: Out<Psn>,
    nak_pending: Out<bool>,
    credits_due: Out<CreditCount>,
}

impl PsnCheckView {
    /// The view's output ports.
    pub fn ports(prefix: &str) -> Vec<PortDecl> {
        vec![
            PortDecl::output::<ChipId>(&format!("{prefix}src")).doc("sender of the window the last arrival touched"),
            PortDecl::output::<QpId>(&format!("{prefix}qp")).doc("QP of the window the last arrival touched"),
            PortDecl::output::<Psn>(&format!("{prefix}epsn")).doc("EPSN of that window"),
            PortDecl::output::<bool>(&format!("{prefix}nak_pending"))
                .doc("a NAK was sent for that EPSN and no resend has moved it yet"),
            PortDecl::output::<CreditCount>(&format!("{prefix}credits_due"))
                .doc("credits queued for return, not yet pushed"),
        ]
    }

    /// Binds the view's ports.
    pub fn bind(prefix: &str, b: &mut Binder) -> Result<PsnCheckView, String> {
        Ok(PsnCheckView {
            src: b.output(&format!("{prefix}src"))?,
            qp: b.output(&format!("{prefix}qp"))?,
            epsn: b.output(&format!("{prefix}epsn"))?,
            nak_pending: b.output(&format!("{prefix}nak_pending"))?,
            credits_due: b.output(&format!("{prefix}credits_due"))?,
        })
    }

    /// Shows the core's state (a function of the state only, so ticking more often changes
    /// nothing).
    pub fn show(&self, core: &PsnCheck) {
        if let Some(((src, qp), epsn, nak)) = core.last_window() {
            self.src.set(src);
            self.qp.set(qp);
            self.epsn.set(epsn);
            self.nak_pending.set(nak);
        }
        self.credits_due.set(CreditCount(core.credits_due()));
    }
}

/// The PSN check's counters (shared with `rclink_rx`, same names).
struct Counters {
    rx_frames: CounterId,
    lost: CounterId,
    data_latency_max: CounterId,
    rx_pkts: CounterId,
    rx_payload: CounterId,
    dup: CounterId,
    ooo: CounterId,
    credits: CounterId,
    first_byte: CounterId,
    last_byte: CounterId,
    type2_frames: CounterId,
    type2_dropped: CounterId,
}

/// The PSN check's data input and credit output with its counters, shared by the standalone
/// block and `rclink_rx`.
pub struct PsnCheckIo {
    data: StreamIn<DataFrame>,
    credit: StreamOut<CreditMsg>,
    counters: Counters,
    /// Whether `credit` had room at the last drive (for the wake-up).
    credit_free: bool,
}

impl PsnCheckIo {
    /// Port declarations of `data` and `credit`.
    pub fn ports() -> Vec<PortDecl> {
        vec![
            PortDecl::stream_in::<DataFrame>("data", 8)
                .doc("received data frames (from the rx_cap), checked at arrival"),
            PortDecl::stream_out::<CreditMsg>("credit").doc("CBFC credit returns per (src, vc) (MAC control path)"),
        ]
    }

    /// Binds `data` and `credit` and registers the counters.
    pub fn bind(b: &mut Binder) -> Result<PsnCheckIo, String> {
        Ok(PsnCheckIo {
            data: b.stream_in("data")?,
            credit: b.stream_out("credit")?,
            counters: Counters {
                rx_frames: b.counter("rx_frames"),
                lost: b.counter("lost_pkts"),
                data_latency_max: b.counter("data_latency_max"),
                rx_pkts: b.counter("rx_pkts"),
                rx_payload: b.counter("rx_payload_bytes"),
                dup: b.counter("dup_pkts"),
                ooo: b.counter("ooo_pkts"),
                credits: b.counter("credits_returned"),
                first_byte: b.counter("first_byte_at"),
                last_byte: b.counter("last_byte_at"),
                type2_frames: b.counter("type2_frames"),
                type2_dropped: b.counter("type2_dropped"),
            },
            credit_free: false,
        })
    }

    /// Checks every frame visible on `data` (each arrived now; a push wakes us the next cycle)
    /// and hands what ACK MERGE must hear to `accepted`. A malformed frame is a violation.
    pub fn receive(
        &mut self,
        ctx: &mut Ctx<'_>,
        core: &mut PsnCheck,
        ctrl: &mut CtrlQueue,
        mut accepted: impl FnMut(RxAccepted),
        mut delivered: impl FnMut(&DataFrame),
    ) {
        let now = ctx.now();
        let k = &self.counters;
        while let Some(f) = self.data.pop() {
            ctx.count(k.rx_frames, 1);
            // Data-path latency from the sender's MAC (0 = unstamped stimulus): with control
            // latency on the sender side it shows that control does not queue behind data.
            if f.sent_at != 0 && f.payload() > 0 {
                let lat = now.saturating_sub(f.sent_at);
                if lat > ctx.counter(k.data_latency_max) {
                    ctx.set_counter(k.data_latency_max, lat);
                }
            }
            let c = match core.receive(now, &f, ctrl) {
                Ok(c) => c,
                Err(why) => {
                    ctx.violation(why);
                    continue;
                }
            };
            ctx.count(k.lost, c.lost.into());
            if c.delivered && c.type2 {
                ctx.count(k.type2_frames, 1);
            }
            if c.type2_broken {
                ctx.count(k.type2_dropped, 1);
            }
            ctx.count(k.rx_pkts, c.pkts.into());
            ctx.count(k.dup, c.dup.into());
            ctx.count(k.ooo, c.ooo.into());
            if c.accepted_bytes > 0 {
                ctx.count(k.rx_payload, c.accepted_bytes);
                if ctx.counter(k.first_byte) == 0 {
                    ctx.set_counter(k.first_byte, now + 1);
                }
                ctx.set_counter(k.last_byte, now + 1);
            }
            if let Some(m) = c.accepted {
                accepted(m);
            }
            if c.delivered {
                delivered(&f);
            }
        }
    }

    /// Pushes the oldest due credit return if `credit` has room.
    pub fn drive_credit(&mut self, ctx: &mut Ctx<'_>, core: &mut PsnCheck) {
        self.credit_free = self.credit.can_push();
        if !self.credit_free {
            return;
        }
        if let Some(mut m) = core.pop_credit(ctx.now()) {
            m.sent_at = ctx.now();
            self.credit.push(m);
            ctx.count(self.counters.credits, m.credits.into());
        }
    }

    /// When the credit output next needs a tick: the oldest return's due cycle, or next cycle
    /// if it is overdue and the stream had room (a full stream wakes us when it drains).
    pub fn next_due(&self, now: Cycle, core: &PsnCheck) -> Option<Cycle> {
        match core.next_credit_due() {
            Some(d) if d > now => Some(d),
            Some(_) if self.credit_free => Some(now + 1),
            _ => None,
        }
    }
}

/// Port list: `data` (and `pause`) in; `credit`, the combinational `ctrl` and `accepted`
/// (and `deliver`) out; the state.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = PsnCheckIo::ports();
    v.push(
        PortDecl::comb_stream_out::<RxCtrl>("ctrl")
            .width(CHECK_WRITES)
            .doc("NAK / FACK ACK / dup re-ACK / CNP, every one made this cycle, to the control queue"),
    );
    v.push(
        PortDecl::comb_stream_out::<RxAccepted>("accepted")
            .width(CHECK_WRITES)
            .doc("accepted packets and immediate ACKs, one per arrival, to ACK MERGE in the same cycle"),
    );
    if p.deliver {
        v.push(
            PortDecl::stream_out::<DataFrame>("deliver")
                .doc("whole frames accepted, in PSN order, to PAXI (with `deliver: true`)"),
        );
        v.push(
            PortDecl::input::<u8>("pause")
                .doc("PAXI RX VC buffer back-pressure (non-zero: hold credit returns)")
                .optional(),
        );
    }
    v.extend(PsnCheckView::ports(""));
    v
}

/// The `psn_check` block (alone in a module testbench, or `chip.lgK.rx.psn_check` in a system).
struct PsnCheckBlock {
    core: PsnCheck,
    io: PsnCheckIo,
    ctrl_q: CtrlQueue,
    ctrl: StreamOut<RxCtrl>,
    accepted: StreamOut<RxAccepted>,
    view: PsnCheckView,
    /// Frames delivered and not yet pushed on `deliver` (one push per cycle): the RC Link RX
    /// buffer (counter `deliver_peak`).
    deliver_q: VecDeque<DataFrame>,
    deliver: Option<StreamOut<DataFrame>>,
    /// PAXI's back-pressure (with `deliver`): credit returns wait while it is non-zero.
    pause: Option<In<u8>>,
    /// The most frames waiting for `deliver` at once (0 without `deliver`).
    c_deliver_peak: CounterId,
}

/// Binds ports; refuses `lg` above 7.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(PsnCheckBlock {
        core: PsnCheck::new(p)?,
        io: PsnCheckIo::bind(b)?,
        ctrl_q: CtrlQueue::default(),
        ctrl: b.stream_out("ctrl")?,
        accepted: b.stream_out("accepted")?,
        view: PsnCheckView::bind("", b)?,
        deliver_q: VecDeque::new(),
        deliver: if p.deliver {
            Some(b.stream_out("deliver")?)
        } else {
            None
        },
        pause: if p.deliver { Some(b.input("pause")?) } else { None },
        c_deliver_peak: b.counter("deliver_peak"),
    }))
}

impl Component for PsnCheckBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Every arrival through the check; what ACK MERGE must hear and the control messages
        // made go out in this cycle, in the order made (the readers tick after us).
        let accepted = &self.accepted;
        let dq = &mut self.deliver_q;
        let delivering = self.deliver.is_some();
        self.io.receive(
            ctx,
            &mut self.core,
            &mut self.ctrl_q,
            |m| accepted.push(m),
            |f| {
                if delivering {
                    dq.push_back(*f);
                }
            },
        );
        hand_over(&mut self.ctrl_q, &self.ctrl);
        // PAXI's RX VC buffer above its high watermark: credits wait (CBFC back-pressure, the
        // seed's TX_PFC_REQ_O shared by PFC and CBFC), so the senders stop when theirs run out.
        let paused = self.pause.as_ref().is_some_and(|p| p.get() != 0);
        if !paused {
            self.io.drive_credit(ctx, &mut self.core);
        }
        let mut deliver_next = None;
        if let Some(d) = &self.deliver {
            let peak = self.c_deliver_peak;
            if self.deliver_q.len() as u64 > ctx.counter(peak) {
                ctx.set_counter(peak, self.deliver_q.len() as u64);
            }
            let mut pushed = false;
            if d.can_push() {
                if let Some(f) = self.deliver_q.pop_front() {
                    d.push(f);
                    pushed = true;
                }
            }
            // More next cycle if the stream keeps room; a full stream wakes us when it drains.
            if !self.deliver_q.is_empty() && d.space() > u32::from(pushed) {
                deliver_next = Some(now + 1);
            }
        }
        self.view.show(&self.core);
        Wake::earliest(
            [
                // While paused, the pause's release (an input change) wakes us.
                if paused {
                    None
                } else {
                    self.io.next_due(now, &self.core)
                },
                deliver_next,
            ]
            .into_iter()
            .flatten(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rclink::rx_test::*;
    use hwsim_hw::Harness;

    fn bench(p: &Params, skip: bool) -> Harness {
        let q = p.clone();
        let mut h = Harness::new("psn_check", ports(p), Box::new(move |b| build(&q, b)), 1, 256).unwrap();
        h.sim_mut().set_skip(skip);
        for port in ["ctrl", "credit", "accepted"] {
            h.sim().net(&format!("dut.{port}")).unwrap().enable_log();
        }
        h
    }

    fn core_with(p: Params) -> (PsnCheck, CtrlQueue) {
        (PsnCheck::new(&p).unwrap(), CtrlQueue::default())
    }

    /// Drains a queue as (kind, qp, psn).
    fn drained(q: &mut CtrlQueue) -> Vec<(CtrlKind, u16, u16)> {
        std::iter::from_fn(|| q.pop())
            .map(|(k, m)| (k, m.rh.qp().value(), m.rh.psn().value()))
            .collect()
    }

    // ---- the core alone ----

    #[test]
    fn core_accepts_in_order_and_reports_to_ack_merge() {
        let (mut c, mut q) = core_with(Params::default());
        let r = c.receive(1, &frame(3, 5, 0, 4096), &mut q).unwrap();
        assert_eq!(r.pkts, 4);
        assert_eq!(r.accepted_bytes, 4096);
        assert_eq!(
            r.accepted,
            Some(RxAccepted {
                src: 3,
                qp: qp(5),
                epsn: psn(4),
                npkts: 4,
                immediate_ack: false,
                ts: 0,
            })
        );
        assert!(q.is_empty());
        assert_eq!(c.epsn(3, qp(5)), psn(4));
        // 6 + 6 + 6 + 1 credits due at 2, one message.
        assert_eq!(c.credits_due(), 19);
        assert_eq!(c.pop_credit(1), None);
        assert_eq!(c.pop_credit(2).map(|m| (m.dst, m.vc, m.credits)), Some((3, 1, 19)));
        assert_eq!(c.credits_due(), 0);
    }

    /// Packet `i` of a TYPE2 copy of 4096 B from chip 3 to group 0, as the RX cap delivers
    /// them (one packet per arrival), `lost` if the wire lost it.
    fn t2_pkt(i: u8, lost: bool) -> DataFrame {
        DataFrame {
            dst: hwsim_ports::MCAST_BIT,
            first_idx: i,
            npkts: 1,
            lost: lost as u8,
            paxi: hwsim_ports::PaxiFlit::data(FlitKind::Mul, 9),
            ..frame(3, 5, 0, 4096)
        }
    }

    #[test]
    fn core_type2_delivers_whole_copies_without_a_check_and_returns_credit_on_vc4() {
        let (mut c, mut q) = core_with(Params::default());
        let mut delivered = Vec::new();
        for i in 0..4 {
            let r = c.receive(1, &t2_pkt(i, false), &mut q).unwrap();
            assert_eq!(r.accepted, None, "no ACK MERGE: TYPE2 is never ACKed");
            delivered.push(r.delivered);
        }
        assert_eq!(delivered, [false, false, false, true], "delivered at its last packet");
        assert!(q.is_empty(), "no ACK, NAK or CNP");
        assert_eq!(c.epsn(3, qp(5)), psn(0), "no PSN window touched");
        assert_eq!(c.pop_credit(2).map(|m| (m.dst, m.vc, m.credits)), Some((3, 4, 19)));
        // A copy with its second packet lost: dropped at its end, its credits still returned.
        let mut broken = Vec::new();
        for i in 0..4 {
            let r = c.receive(5, &t2_pkt(i, i == 1), &mut q).unwrap();
            broken.push((r.delivered, r.type2_broken));
        }
        assert_eq!(broken, [(false, false), (false, false), (false, false), (false, true)]);
        assert_eq!(c.pop_credit(6).map(|m| (m.vc, m.credits)), Some((4, 19)));
        // The next copy starts afresh.
        let r: Vec<bool> = (0..4)
            .map(|i| c.receive(7, &t2_pkt(i, false), &mut q).unwrap().delivered)
            .collect();
        assert_eq!(r, [false, false, false, true]);
    }

    #[test]
    fn core_gap_naks_once_per_epsn() {
        let (mut c, mut q) = core_with(Params::default());
        c.receive(1, &frame(3, 5, 0, 64), &mut q).unwrap();
        let r = c.receive(2, &frame(3, 5, 2, 64), &mut q).unwrap();
        assert_eq!((r.ooo, r.accepted), (1, None));
        assert_eq!(c.last_window(), Some(((3, qp(5)), psn(1), true)));
        c.receive(3, &frame(3, 5, 3, 64), &mut q).unwrap();
        assert_eq!(drained(&mut q), vec![(CtrlKind::Nak, 5, 1)]);
        c.receive(4, &frame(3, 5, 1, 64), &mut q).unwrap();
        assert_eq!(c.last_window(), Some(((3, qp(5)), psn(2), false)));
        // Every data packet, NAKed or not, owes its credit.
        assert_eq!(c.credits_due(), 4);
    }

    #[test]
    fn core_duplicate_policy() {
        let (mut c, mut q) = core_with(Params::default());
        c.receive(1, &frame(3, 5, 0, 2688), &mut q).unwrap();
        let r = c.receive(2, &frame(3, 5, 1, 1344), &mut q).unwrap();
        assert_eq!((r.dup, r.accepted), (1, None));
        assert!(q.is_empty(), "the seed drops a duplicate silently");

        let (mut c, mut q) = core_with(Params {
            duplicate: Duplicate::Ack,
            ..Params::default()
        });
        c.receive(1, &frame(3, 5, 0, 2688), &mut q).unwrap();
        let r = c.receive(2, &frame(3, 5, 0, 2688), &mut q).unwrap();
        assert_eq!(r.dup, 2);
        assert_eq!(drained(&mut q), vec![(CtrlKind::DupAck, 5, 2)]);
        assert_eq!(
            r.accepted,
            Some(RxAccepted {
                src: 3,
                qp: qp(5),
                epsn: psn(2),
                npkts: 0,
                immediate_ack: true,
                ts: 0,
            })
        );
    }

    #[test]
    fn core_fack_acks_at_once_without_credit() {
        let (mut c, mut q) = core_with(Params::default());
        c.receive(1, &frame(3, 5, 0, 1344), &mut q).unwrap();
        let r = c.receive(2, &frame(3, 5, 1, 0), &mut q).unwrap();
        assert_eq!(drained(&mut q), vec![(CtrlKind::Fack, 5, 2)]);
        assert_eq!(
            r.accepted.map(|m| (m.epsn, m.npkts, m.immediate_ack)),
            Some((psn(2), 0, true))
        );
        assert_eq!(c.credits_due(), 6);
    }

    #[test]
    fn core_refuses_misrouted_frames() {
        let (mut c, mut q) = core_with(Params::default());
        let e = c
            .receive(
                1,
                &DataFrame {
                    lg: 1,
                    ..frame(3, 5, 0, 64)
                },
                &mut q,
            )
            .unwrap_err();
        assert!(e.contains("reached the RX of chip 0 lg 0"), "{e}");
    }

    proptest::proptest! {
        /// Against a per-packet reference: EPSN, packets handed to ACK MERGE, NAKs (one per EPSN
        /// value) and credit conservation (every data packet's cost comes back, lost or not,
        /// FACKs none) hold for any mix of in-order, gap, duplicate, lost and zero-byte frames.
        #[test]
        fn core_matches_a_per_packet_reference(
            frames in proptest::collection::vec((-6i32..6, 0u32..=4096, proptest::num::u8::ANY), 1..40)
        ) {
            let (mut c, mut q) = core_with(Params::default());
            let (mut epsn, mut nak_for, mut credits, mut accepted, mut naks) = (0u16, None, 0u32, 0u32, 0u32);
            let mut handed = 0u32;
            for (k, &(offset, bytes, lost)) in frames.iter().enumerate() {
                let first = (i32::from(epsn) + offset).rem_euclid(4096) as u16;
                let f = DataFrame { lost, ..frame(3, 5, first, bytes) };
                for i in 0..f.npkts {
                    let (p, b) = (f.psn_of(i).value(), f.pkt_bytes(i));
                    if b > 0 {
                        credits += cbfc_cost(b, 50, CreditSize::B256);
                    }
                    if i < 8 && lost & (1 << i) != 0 {
                        continue;
                    }
                    if p == epsn {
                        epsn = (epsn + 1) % 4096;
                        accepted += u32::from(b > 0);
                    } else if b > 0 && Psn::new(p).unwrap().after(Psn::new(epsn).unwrap()) && nak_for != Some(epsn) {
                        nak_for = Some(epsn);
                        naks += 1;
                    }
                }
                let r = c.receive(k as u64 + 1, &f, &mut q).unwrap();
                handed += r.accepted.map_or(0, |m| u32::from(m.npkts));
                proptest::prop_assert_eq!(c.epsn(3, qp(5)).value(), epsn);
            }
            proptest::prop_assert_eq!(handed, accepted);
            let sent_naks = std::iter::from_fn(|| q.pop()).filter(|(k, _)| *k == CtrlKind::Nak).count();
            proptest::prop_assert_eq!(sent_naks as u32, naks);
            proptest::prop_assert_eq!(c.credits_due(), credits);
            let mut returned = 0;
            while let Some(m) = c.pop_credit(u64::MAX) {
                returned += u32::from(m.credits);
            }
            proptest::prop_assert_eq!(returned, credits);
        }
    }

    // ---- the block ----

    /// The block's outputs: NAK at arrival, credits one cycle later, `accepted` at arrival.
    #[test]
    fn block_streams_and_view() {
        both_modes(
            |skip| {
                let mut h = bench(&Params::default(), skip);
                let rows = [
                    (0, frame(3, 5, 0, 4096)), // arrives 1: 4 accepted
                    (1, frame(3, 5, 6, 1344)), // arrives 2: gap, NAK 4
                    (2, frame(3, 5, 1, 1344)), // arrives 3: duplicate
                ];
                drive(&mut h, &rows, 30);
                assert_eq!(ctrls(&h), vec![(2, "NAK", 5, 4)]);
                assert_eq!(credits(&h), vec![(2, 3, 1, 19), (3, 3, 1, 6), (4, 3, 1, 6)]);
                let acc: Vec<_> = log::<RxAccepted>(&h, "accepted")
                    .into_iter()
                    .map(|(c, m)| (c, m.epsn.value(), m.npkts))
                    .collect();
                assert_eq!(acc, vec![(1, 4, 4)]);
                assert_eq!(h.peek::<Psn>("epsn"), psn(4));
                assert!(h.peek::<bool>("nak_pending"));
                assert_eq!(h.peek::<CreditCount>("credits_due"), CreditCount(0));
                assert_eq!(counter(&h, "dup_pkts"), 1);
                assert_eq!(counter(&h, "ooo_pkts"), 1);
                assert_eq!(counter(&h, "credits_returned"), 31);
                h
            },
            &["ctrl", "credit", "accepted"],
        );
    }

    #[test]
    fn bad_params_refused() {
        let p = Params {
            lg: 8,
            ..Params::default()
        };
        let q = p.clone();
        assert!(Harness::new("psn_check", ports(&p), Box::new(move |b| build(&q, b)), 1, 1).is_err());
    }
}
