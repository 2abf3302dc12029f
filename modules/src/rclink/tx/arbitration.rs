//! The TX's arbitration round (seed 000 «VC 仲裁», «CBFC 流控», «打包延迟与 MAC Credit»; seed 002
//! §5.4 gate order): TYPE2 against TYPE1 by the MUL VC's weight, the bank arbiter over the VC
//! queues with the rate gate and the CBFC per-packet rule, and the grant of one frame.

use hwsim_hw::Ctx;
use hwsim_ports::MacCreditTake;

use super::RcLinkTx;
use crate::rclink::bank_arbiter::Gate;

impl RcLinkTx {
    /// The round of this cycle, if anything changed since the last one; then whether one may
    /// follow next cycle. Returns whether the slot FIFO had changed before the round.
    pub(super) fn run_round(&mut self, ctx: &mut Ctx<'_>, now: u64) -> bool {
        let changed = self.slots.take_changed();
        self.arb_pending |= changed;
        let mut granted = false;
        if self.arb_pending && (self.slots.queued() > 0 || !self.t2.q.is_empty()) {
            granted = self.round(ctx, now);
        }
        self.mac_space_seen = self.frame_out.space() - granted as u32;
        // After a grant the next one can go next cycle if a MAC credit and room remain (the
        // room only grows); otherwise the MAC's credit or pop wakes us.
        self.arb_pending = granted
            && self.mac_space_seen > 0
            && self.mac_free > 0
            && (self.slots.queued() > 0 || !self.t2.q.is_empty());
        changed
    }

    /// One arbitration round over TYPE2 and TYPE1. TYPE2 is the MUL VC (the arbiter's fifth,
    /// weight `vc_weights[4]`): it goes first for up to that many frames in a row while TYPE1
    /// has frames queued, then TYPE1 gets the next turn.
    fn round(&mut self, ctx: &mut Ctx<'_>, now: u64) -> bool {
        if self.t2.q.is_empty() {
            return self.slots.queued() > 0 && self.arbitrate(ctx, now);
        }
        if self.mac_free == 0 || !self.frame_out.can_push() {
            ctx.count(self.c.arb_calls, 1);
            ctx.count(self.c.arb_tx_busy, 1);
            return false;
        }
        let t1 = self.slots.queued() > 0;
        if !t1 || self.t2.run < self.t2.weight {
            if self.grant_type2(ctx, now) {
                self.t2.run = if t1 { self.t2.run + 1 } else { 0 };
                return true;
            }
            return t1 && self.arbitrate(ctx, now);
        }
        if self.arbitrate(ctx, now) {
            self.t2.run = 0;
            return true;
        }
        self.grant_type2(ctx, now)
    }

    /// One arbitration round. Returns whether a frame was granted.
    fn arbitrate(&mut self, ctx: &mut Ctx<'_>, now: u64) -> bool {
        ctx.count(self.c.arb_calls, 1);
        if self.mac_free == 0 || !self.frame_out.can_push() {
            ctx.count(self.c.arb_tx_busy, 1);
            return false;
        }
        self.rate_gate.wake.set(None);
        let (slots, cbfc, rate_gate, ledgers, c) =
            (&self.slots, &self.cbfc, &self.rate_gate, &self.flow_ledger, &self.c);
        let pick = self.arbiter.arbitrate(
            slots.queues(),
            |id| slots.flow_of_frame(id),
            |id| {
                let flow = slots.flow_of_frame(id);
                if !rate_gate.allows(flow, now) {
                    ctx.count(c.rate_block, 1);
                    return Gate::RateBlocked;
                }
                // CBFC per packet: the frame may go if its first WaitGrant packet passes.
                let (n, _) = cbfc.run(ledgers[flow] as usize, slots.unsent_payloads(id).take(1));
                if n == 0 {
                    ctx.count(c.credit_block, 1);
                    return Gate::CreditBlocked;
                }
                Gate::Pass
            },
        );
        let Some((vc, pos)) = pick else {
            return false;
        };
        let id = self.slots.queues()[vc][pos];
        let ledger = self.flow_ledger[self.slots.flow_of_frame(id)] as usize;
        let (k, cost) = self.cbfc.run(ledger, self.slots.unsent_payloads(id));
        let frame = self.slots.grant(vc, pos, k as u8, now);
        if cost > 0 {
            self.cbfc.charge(ledger, cost);
            self.show_credit(ledger);
        }
        self.arbiter.sent(vc);
        self.take_mac_credit(false);
        if self.rate_gate.enabled {
            let flow = self.slots.flow_of_frame(id);
            if self.rate_gate.on_sent(flow, frame.wire_bytes() as u64, now) {
                ctx.count(self.c.rate_increases, 1);
            }
        }
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, frame.npkts as u64);
        ctx.count(self.c.payload_bytes_sent, frame.payload() as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        self.frame_out.push(frame);
        true
    }
}

impl RcLinkTx {
    /// A grant takes its MAC credit: one from this cycle's count, and the take pushed to the
    /// MAC credit counter (`mac_take`, combinational: it counts it in this cycle). `mul`: a
    /// TYPE2 frame, which takes a multicast MAC TX credit too.
    pub(super) fn take_mac_credit(&mut self, mul: bool) {
        debug_assert!(self.mac_free > 0 && (!mul || self.mul_free > 0));
        self.mac_free -= 1;
        if mul {
            self.mul_free -= 1;
        }
        // One grant per cycle and a take stream of one place, popped in the cycle: always room.
        self.mac_take.push(MacCreditTake { mul });
    }
}
