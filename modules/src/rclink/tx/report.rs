//! What the TX shows (seed 000 appendix C «诊断计数器»): its own counter ids, the credit view
//! after a ledger change, and the end-of-cycle waves and gauges of its modules.

use hwsim_hw::{Binder, CounterId, Ctx};
use hwsim_ports::UInt;

use super::RcLinkTx;

/// The ids of the counters this block declares (its modules' blocks declare the others).
pub(super) struct Counters {
    pub(super) arb_calls: CounterId,
    pub(super) arb_tx_busy: CounterId,
    pub(super) credit_block: CounterId,
    pub(super) rate_block: CounterId,
    pub(super) frames_sent: CounterId,
    pub(super) pkts_sent: CounterId,
    pub(super) payload_bytes_sent: CounterId,
    pub(super) wire_bytes_sent: CounterId,
    pub(super) acks_received: CounterId,
    pub(super) acks_ignored: CounterId,
    pub(super) cnp_received: CounterId,
    pub(super) ctrl_latency_max: CounterId,
    pub(super) rtt_max: CounterId,
    pub(super) type2_frames: CounterId,
    pub(super) type2_bytes: CounterId,
    pub(super) type2_credit_block: CounterId,
    pub(super) type2_mac_block: CounterId,
}

impl Counters {
    pub(super) fn declare(b: &mut Binder) -> Self {
        Counters {
            arb_calls: b.counter("diag_arb_calls"),
            arb_tx_busy: b.counter("diag_arb_tx_busy"),
            credit_block: b.counter("diag_credit_block"),
            rate_block: b.counter("diag_rate_block"),
            frames_sent: b.counter("frames_sent"),
            pkts_sent: b.counter("pkts_sent"),
            payload_bytes_sent: b.counter("payload_bytes_sent"),
            wire_bytes_sent: b.counter("wire_bytes_sent"),
            acks_received: b.counter("acks_received"),
            acks_ignored: b.counter("acks_ignored"),
            cnp_received: b.counter("cnp_received"),
            ctrl_latency_max: b.counter("ctrl_latency_max"),
            rtt_max: b.counter("rtt_max"),
            type2_frames: b.counter("type2_frames_sent"),
            type2_bytes: b.counter("type2_payload_bytes_sent"),
            type2_credit_block: b.counter("type2_credit_block"),
            type2_mac_block: b.counter("type2_mac_block"),
        }
    }
}

impl RcLinkTx {
    /// End of the cycle: the slot FIFO waves, the slot gauges and
    /// `credits_outstanding`; `changed` says the slot FIFO changed before the round.
    pub(super) fn show_state(&mut self, ctx: &mut Ctx<'_>, changed: bool) {
        if self.slots.take_changed() || changed {
            self.slot_view.show(&self.slots, &self.vcq);
        }
        self.slots.update_gauges(ctx, &self.sc);
        if let Some(out) = &self.wait_crd {
            let now = ctx.now();
            let (slots, end) = self.wait_crd_slots(now);
            out.update(UInt::wrap(slots as u64));
            // The masks clear at their window's end: the round runs then (and this shows 0),
            // whether or not the arbiter looked at the masked flow's VC.
            if let Some(t) = end {
                self.pace_wake = Some(self.pace_wake.map_or(t, |w| w.min(t)));
            }
        }
    }

    /// With the window rate control: the WaitGrant slots of the flows it masks now (their
    /// state WAIT_CRD in the seed), and the earliest end of those masks.
    fn wait_crd_slots(&self, now: u64) -> (u32, Option<u64>) {
        let mut slots = 0u32;
        let mut end: Option<u64> = None;
        for f in self.vcq.iter() {
            if let Some(t) = self.pace[f.flow as usize].filter(|&t| t > now) {
                slots += (f.npkts - f.sent) as u32;
                end = Some(end.map_or(t, |e| e.min(t)));
            }
        }
        (slots, end)
    }
}
