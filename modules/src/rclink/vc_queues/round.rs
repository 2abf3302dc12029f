//! The VC queues' arbitration round (seed 000 «VC 仲裁», «CBFC 流控», «打包延迟与 MAC Credit»; seed 002
//! §5.4 gate order): TYPE2 against TYPE1 by the MUL VC's weight; for TYPE1, the VC queues' side
//! of the bank arbiter — per VC the first flow head that passes the rate gate and the CBFC
//! per-packet rule, the per-flow rule — asked of the round robin (`tx.arbiter`, its own node),
//! and the grant of one frame.
//!
//! The round is split around the arbiter node: process 0 ([`VcQueuesNode::plan_round`])
//! decides what the round tries and pushes the eligible VCs on `arb_req`; process 1
//! ([`VcQueuesNode::finish_round`]) reads the arbiter's grant in the same cycle and grants the
//! frame. The decision and the gates see the state of process 0, which nothing changes before
//! process 1, so the round is the one a single pass stopping at its grant makes: blocked flow heads are
//! counted, and a paced flow's ready time taken for the wake-up, only in the VCs the arbiter
//! looked at (`grant.visited`).

use hwsim_hw::Ctx;
use hwsim_ports::{DataFrame, MacCreditTake, RateSent, SlotGrant, UInt, VcGrant, VcReq};

use super::{unsent_payloads, Gate, QueuedFrame, VcQueuesNode};
use crate::rclink::cbfc;
use crate::rclink::framing::{Framer, Granted};

/// What this cycle's round does after the arbiter's answer (decided in process 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Plan {
    /// No round, or one that found no MAC credit or room.
    #[default]
    Idle,
    /// The TYPE2 head goes (its gates passed in process 0; `cost` per member ledger); `t1`:
    /// TYPE1 had frames queued (the MUL VC's run goes on).
    Type2 { cost: u32, t1: bool },
    /// A TYPE1 request is on `arb_req`; `type2_after`: TYPE1 had the turn, so without a grant
    /// TYPE2 tries next, and with one the MUL VC's run restarts.
    Arb { type2_after: bool },
}

impl VcQueuesNode {
    /// Process 0: if anything changed since the last round, decide what it tries and, for
    /// TYPE1, push the request.
    pub(super) fn plan_round(&mut self, ctx: &mut Ctx<'_>, now: u64) {
        self.plan = Plan::Idle;
        if self.arb_pending && (self.vcq.queued() > 0 || self.t2.queued > 0) {
            self.plan = self.plan(ctx, now);
        }
    }

    /// TYPE2 is the MUL VC (the arbiter's fifth, weight `vc_weights[4]`): it goes first for up
    /// to that many frames in a row while TYPE1 has frames queued, then TYPE1 gets the next turn.
    fn plan(&mut self, ctx: &mut Ctx<'_>, now: u64) -> Plan {
        if self.t2.queued == 0 {
            return self.request(ctx, now, false);
        }
        if self.mac_free == 0 || !self.frame_out.can_push() {
            ctx.count(self.c.arb_calls, 1);
            ctx.count(self.c.arb_tx_busy, 1);
            return Plan::Idle;
        }
        let t1 = self.vcq.queued() > 0;
        if !t1 || self.t2.run < self.t2.weight {
            if let Some(cost) = self.type2_gates(ctx) {
                return Plan::Type2 { cost, t1 };
            }
            return if t1 { self.request(ctx, now, false) } else { Plan::Idle };
        }
        self.request(ctx, now, true)
    }

    /// A TYPE1 round: without a MAC credit or room it is skipped; else the eligible VCs go to
    /// the arbiter.
    fn request(&mut self, ctx: &mut Ctx<'_>, now: u64, type2_after: bool) -> Plan {
        ctx.count(self.c.arb_calls, 1);
        if self.mac_free == 0 || !self.frame_out.can_push() {
            ctx.count(self.c.arb_tx_busy, 1);
            return Plan::Idle;
        }
        let eligible = self.find_heads(now);
        // One request per cycle on a stream of one place the arbiter pops in the cycle.
        self.arb_req.push(VcReq {
            eligible: UInt::wrap(eligible as u64),
        });
        Plan::Arb { type2_after }
    }

    /// Per VC, in queue order, the first flow head that passes the rate gate, then the CBFC
    /// per-packet rule (its first WaitGrant packet); a blocked head holds back the rest of its
    /// flow (a flow is one (dst, qp), so all of it is in one VC). Returns the eligible VCs.
    fn find_heads(&mut self, now: u64) -> u8 {
        let (cbfc, pace, ledgers) = (&self.cbfc, &self.pace, &self.flow_ledger);
        let mp = self.max_payload;
        self.vcq.find_heads(|e| {
            let f = e.flow as usize;
            if let Some(t) = pace[f].filter(|&t| t > now) {
                return Gate::Rate(t);
            }
            let (n, _) = cbfc.run(ledgers[f] as usize, unsent_payloads(e, mp).take(1));
            if n == 0 {
                Gate::Credit
            } else {
                Gate::Pass
            }
        })
    }

    /// Process 1: the arbiter's answer, and the grant of this cycle's round (at most one).
    pub(super) fn finish_round(&mut self, ctx: &mut Ctx<'_>, now: u64) {
        let granted = match self.plan {
            Plan::Idle => false,
            Plan::Type2 { cost, t1 } => {
                self.grant_type2(ctx, now, cost);
                self.t2.run = if t1 { self.t2.run + 1 } else { 0 };
                true
            }
            Plan::Arb { type2_after } => {
                let Some(g) = self.arb_grant.pop() else {
                    ctx.violation("vc_queues: no grant from the arbiter in the cycle of the request");
                    return;
                };
                self.count_heads(ctx, g);
                // The arbiter may be an RTL model standing in for the node (`rtl` replace
                // mode): a grant of a VC with no eligible head is its protocol error, not ours.
                let vc = g.vc.0 as usize;
                if g.granted && self.vcq.head(vc).is_none() {
                    ctx.violation(format!(
                        "vc_queues: the arbiter granted VC {vc}, which the request did not name eligible"
                    ));
                    return;
                }
                if g.granted {
                    self.grant_type1(ctx, now, g.vc.0 as usize);
                    if type2_after {
                        self.t2.run = 0;
                    }
                    true
                } else if type2_after {
                    match self.type2_gates(ctx) {
                        Some(cost) => {
                            self.grant_type2(ctx, now, cost);
                            true
                        }
                        None => false,
                    }
                } else {
                    false
                }
            }
        };
        self.plan = Plan::Idle;
        self.mac_space_seen = self.frame_out.space() - granted as u32;
        // After a grant the next one can go next cycle if a MAC credit and room remain (the
        // room only grows); otherwise the MAC's credit or pop wakes us.
        self.arb_pending =
            granted && self.mac_space_seen > 0 && self.mac_free > 0 && (self.vcq.queued() > 0 || self.t2.queued > 0);
    }

    /// The blocked flow heads of the VCs the round looked at, and the earliest ready time of
    /// the paced ones (the wake-up).
    fn count_heads(&mut self, ctx: &mut Ctx<'_>, g: VcGrant) {
        let b = self.vcq.blocked(g.visited.0 as u8);
        ctx.count(self.c.rate_block, b.rate);
        ctx.count(self.c.credit_block, b.credit);
        self.pace_wake = b.ready;
    }

    /// The grant of VC `vc`'s eligible head: the run of its WaitGrant packets CBFC admits.
    fn grant_type1(&mut self, ctx: &mut Ctx<'_>, now: u64, vc: usize) {
        let head = *self.vcq.head(vc).expect("the arbiter grants an eligible VC");
        let ledger = self.flow_ledger[head.flow as usize] as usize;
        let (k, cost) = self.cbfc.run(ledger, unsent_payloads(&head, self.max_payload));
        self.vcq.grant(vc, k as u8);
        // The slot FIFO moves the packets to WaitAck and starts the retry timer in this cycle.
        self.grant_out.push(SlotGrant {
            id: UInt::wrap(head.id as u64),
            k: k as u8,
            type2: false,
        });
        let frame = frame_of(&self.framer, &self.hdr, &head, k as u8, now);
        if cost > 0 {
            // The controller charges it in this cycle; its count comes back for the next round.
            let (dst, vc) = self.cbfc.key(ledger);
            self.charge_cbfc(dst, vc, cost);
        }
        self.take_mac_credit(false);
        if self.p.rate_control.on() {
            // The rate gate paces the flow from this grant (and counts its byte counter's
            // increase); the next round sees the pacing on `rate_paced`. One grant a cycle.
            self.rate_sent.push(RateSent {
                dst: head.seg.dst,
                qp: head.seg.qp,
                bytes: frame.wire_bytes(),
            });
        }
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, frame.npkts as u64);
        ctx.count(self.c.payload_bytes_sent, frame.payload() as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        self.frame_out.push(frame);
    }

    /// A grant's CBFC charge, to the controller (`cbfc_charge`, combinational: it charges in
    /// this cycle). For a TYPE2 frame `dst` is the group's address and `vc` [`TYPE2_VC`].
    pub(super) fn charge_cbfc(&mut self, dst: hwsim_ports::ChipId, vc: u8, cost: u32) {
        // One grant per cycle and a stream of one place, popped in the cycle: always room.
        self.cbfc_charge
            .push(cbfc::ledger_msg(self.p.chip, self.p.lg, dst, vc, cost));
    }

    /// A grant takes its MAC credit: one from this cycle's count, and the take pushed to the
    /// MAC credit counter (`mac_take`, combinational: it counts it in this cycle). `mul`: a
    /// TYPE2 frame, which takes a multicast MAC TX credit too (the TYPE2 queue gated on it).
    pub(super) fn take_mac_credit(&mut self, mul: bool) {
        debug_assert!(self.mac_free > 0);
        self.mac_free -= 1;
        // One grant per cycle and a take stream of one place, popped in the cycle: always room.
        self.mac_take.push(MacCreditTake { mul });
    }
}

/// The wire frame of `k` WaitGrant packets of a queued frame granted at `now`: its next
/// packets' PSNs, the header of its traffic class (`hdr[0]` requests, `hdr[1]` PAXI responses),
/// ECN-capable (TYPE1 is under DCQCN).
pub fn frame_of(framer: &Framer, hdr: &[hwsim_ports::HeaderTags; 2], f: &QueuedFrame, k: u8, now: u64) -> DataFrame {
    let granted = Granted {
        dst: f.seg.dst,
        qp: f.seg.qp,
        first_psn: f.first_psn.wrapping_add(f.sent as u16),
        first_idx: f.sent,
        npkts: k,
        frame_bytes: f.seg.bytes,
        txn: f.seg.txn,
        frame_seq: f.seg.frame_seq,
        hdr: hdr[f.seg.paxi.kind.is_response() as usize],
        ecn_capable: true,
        paxi: f.seg.paxi,
    };
    framer.frame(&granted, now)
}
