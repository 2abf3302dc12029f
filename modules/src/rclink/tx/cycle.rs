//! The TX core's cycle (seed 000 «事件粒度»): three processes, and the order of their phases is
//! the timing — slots an ACK frees at n take a segment at n, a segment taken at n may be granted
//! at n, one grant and one `FrameDone` per cycle.
//!
//! Process 0 (`tick`) takes the cycle's inputs in: ACKs, NAKs and CNPs (a CNP that passed CNP
//! MERGE on to the rate gate, `dcqcn`), credit returns, due timeouts, a paced flow's ready cycle
//! reached, segments, and pushes one `FrameDone`. The rate gate cuts in the same cycle and tells
//! the cut flow's pacing and its timer steps; the MAC credit counter (`mac_credit`, its own
//! node) takes the MAC's returns and shows its counts in the same cycle; process 1 reads them
//! and, for a TYPE1 round, asks the arbiter (`arbiter`, its own node) with the VCs that have an
//! eligible head; process 2 reads the arbiter's grant, grants at most one frame, pushes its take
//! back to the counter and its flow and bytes to the rate gate, and shows the state. The kernel
//! orders them core 0 → (dcqcn 0, counter 0) → core 1 → arbiter → core 2 → (counter 1, dcqcn 1);
//! process 1 runs when process 0 ran or the rate gate's answers changed, process 2 after it.

use hwsim_hw::{Component, Ctx, Wake};

use super::RcLinkTx;

impl Component for RcLinkTx {
    /// Process 0: the cycle's inputs.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Nothing below acts on the mere fact of being ticked: every action follows an input or
        // a timer that is due.
        // ACKs first: slots they free can take a waiting segment in the same cycle.
        self.take_ctrl(ctx, now);
        self.slots.expire_timeouts(ctx, &self.sc, now);
        self.pace_reached(now);
        self.take_segments(ctx);
        self.map_new_flows();
        let done_pushed = self.push_done();
        // Its own follow-up: the next `FrameDone`.
        let done_more = self.slots.done_waiting() > 0 && done_pushed && self.done_out.space() > 1;
        ctx.run_process(1);
        Wake::next_cycle_if(done_more)
    }

    /// Process 1: this cycle's MAC credits and the round's request to the arbiter; process 2:
    /// its grant, then the waves.
    fn process(&mut self, p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if p == 1 {
            // The round runs on a change: the MAC took a frame (the stream's space grew beyond
            // what our own push left, see `mac_space_seen`) or gave a credit back (the count rose).
            if self.frame_out.space() > self.mac_space_seen {
                self.arb_pending = true;
            }
            self.mac_free = self.mac_available.get().0 as u32;
            if self.mac_free > self.mac_seen {
                self.arb_pending = true;
            }
            self.take_cbfc_counts();
            self.take_pacing();
            self.read_type2();
            self.slots_changed = self.plan_round(ctx, now);
            // Process 2 follows in this cycle and says what comes next.
            ctx.run_process(2);
            return Wake::OnInput;
        }
        self.finish_round(ctx, now);
        self.mac_seen = self.mac_free;
        let changed = std::mem::take(&mut self.slots_changed);
        self.show_state(ctx, changed);
        // The next round, retry deadline or paced flow's ready cycle runs the block from
        // process 0.
        let next = self.next_wake();
        ctx.run_process_on(0, next);
        Wake::OnInput
    }
}

impl RcLinkTx {
    /// One `FrameDone` to PAXI if one waits and `done` has room; returns whether it went.
    fn push_done(&mut self) -> bool {
        let mut done_pushed = false;
        if self.slots.done_waiting() > 0 && self.done_out.can_push() {
            let d = self.slots.pop_done().expect("waiting");
            self.done_out.push(d);
            done_pushed = true;
        }
        done_pushed
    }

    /// The round's follow-up: next cycle while a round is pending; else the earliest retry
    /// deadline or ready cycle of a rate-blocked flow (each runs the block from process 0,
    /// which takes it).
    fn next_wake(&mut self) -> Wake {
        if self.arb_pending {
            Wake::NextCycle
        } else {
            Wake::earliest([self.slots.next_deadline(), self.pace_wake].into_iter().flatten())
        }
    }

    /// A rate-blocked flow's ready cycle reached: the round runs again.
    fn pace_reached(&mut self, now: u64) {
        if self.pace_wake.is_some_and(|t| t <= now) {
            self.pace_wake = None;
            self.arb_pending = true;
        }
    }

    /// What the rate gate says (`tx.dcqcn`): the pacing a grant moved (last cycle's), then the
    /// pacing of the flows a CNP cut in this cycle, and its timer steps; a cut or a step (a
    /// rate rose) runs a round.
    fn take_pacing(&mut self) {
        while let Some(m) = self.rate_paced.pop() {
            self.set_pace(m);
        }
        while let Some(m) = self.rate_pace.pop() {
            self.set_pace(m);
            self.arb_pending = true;
        }
        let steps = self.rate_steps.get();
        if steps != self.steps_seen {
            self.steps_seen = steps;
            self.arb_pending = true;
        }
    }

    /// What the CBFC controller says (`tx.cbfc`): the counts after the last grant's charge
    /// (last cycle's), then after this cycle's returns; a return runs a round.
    fn take_cbfc_counts(&mut self) {
        while let Some(m) = self.cbfc_charged.pop() {
            self.set_credits(m);
        }
        while let Some(m) = self.cbfc_counts.pop() {
            self.set_credits(m);
            self.arb_pending = true;
        }
    }

    fn set_credits(&mut self, m: hwsim_ports::CreditMsg) {
        // TYPE1 ledgers only: the TYPE2 ones' counts go to the TYPE2 queue (`tx.type2`).
        self.cbfc.set_remaining(m.dst, m.vc, m.credits as u32);
    }

    fn set_pace(&mut self, m: hwsim_ports::RatePace) {
        // The gate paces only flows this core told it of, which the slot FIFO keeps.
        if let Some(f) = self.slots.find_flow(m.dst, m.qp) {
            self.pace[f] = m.ready_at();
        }
    }
}
