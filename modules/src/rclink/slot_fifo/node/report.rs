//! What the slot FIFO node shows (seed 000 appendix C «诊断计数器»): its own counter ids and the
//! slot FIFO's waves and gauges (the VC queues' node counts the round's).

use hwsim_hw::{Binder, CounterId, Ctx};

use super::SlotFifoNode;

/// The ids of the counters this block declares (its modules' blocks declare the others).
pub(super) struct Counters {
    pub(super) acks_received: CounterId,
    pub(super) acks_ignored: CounterId,
    pub(super) cnp_received: CounterId,
    pub(super) ctrl_latency_max: CounterId,
    pub(super) rtt_max: CounterId,
}

impl Counters {
    pub(super) fn declare(b: &mut Binder) -> Self {
        Counters {
            acks_received: b.counter("acks_received"),
            acks_ignored: b.counter("acks_ignored"),
            cnp_received: b.counter("cnp_received"),
            ctrl_latency_max: b.counter("ctrl_latency_max"),
            rtt_max: b.counter("rtt_max"),
        }
    }
}

impl SlotFifoNode {
    /// End of the cycle: the slot FIFO waves and the slot gauges; `changed` says the slot FIFO
    /// changed before the round.
    pub(super) fn show_state(&mut self, ctx: &mut Ctx<'_>, changed: bool) {
        if self.slots.take_changed() || changed {
            self.slot_view.show(&self.slots);
        }
        self.slots.update_gauges(ctx, &self.sc);
    }
}
