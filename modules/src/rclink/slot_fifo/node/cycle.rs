//! The slot FIFO node's cycle (seed 000 «事件粒度»): two processes around the VC queues' round, and
//! the order of their phases is the timing — slots an ACK frees at n take a segment at n, a
//! segment taken at n may be granted at n, one `FrameDone` per cycle.
//!
//! Process 0 (`tick`) takes the cycle's inputs in: ACKs, NAKs and CNPs (a CNP that passed CNP
//! MERGE on to the rate gate, `dcqcn`), due timeouts, segments (TYPE2 ones to the TYPE2 queue),
//! and pushes one `FrameDone`; the changes of the VC queues go to `vc_queues` (`q_ops`), and
//! the count of changes (`q_changes`) runs its round. Process 1 takes the round's grant
//! (`q_grant`: WaitGrant → WaitAck, the retry timer) and shows the slots. The kernel orders
//! them core 0 → (dcqcn 0, cbfc 0, type2 0, mac_credit 0) → vc_queues 0 → arbiter →
//! vc_queues 1 → core 1 → (mac_credit 1, cbfc 1, dcqcn 1, type2 1).

use hwsim_hw::{Component, Ctx, Wake};
use hwsim_ports::FlitKind;

use super::SlotFifoNode;

impl Component for SlotFifoNode {
    /// Process 0: the cycle's inputs.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Nothing below acts on the mere fact of being ticked: every action follows an input or
        // a timer that is due.
        // ACKs first: slots they free can take a waiting segment in the same cycle.
        let mut changed = self.take_ctrl(ctx, now);
        self.slots.expire_timeouts(ctx, &self.sc, now);
        changed |= self.take_segments(ctx);
        let done_pushed = self.push_done();
        // The VC queues see this cycle's changes in this cycle's round.
        self.slots_changed = self.slots.take_changed();
        for op in self.slots.drain_ops() {
            // Room for every op a cycle can make (`vc_queues::ops_depth`).
            self.q_ops.push(op);
        }
        if changed || self.slots_changed {
            self.changes += 1;
            self.q_changes.set(self.changes);
        }
        // Its own follow-up: the next `FrameDone`.
        let done_more = self.slots.done_waiting() > 0 && done_pushed && self.done_out.space() > 1;
        ctx.run_process(1);
        Wake::next_cycle_if(done_more)
    }

    /// Process 1: the round's grant, then the waves.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let mut t2_room = false;
        while let Some(g) = self.q_grant.pop() {
            if g.type2 {
                self.t2.queued -= 1;
                t2_room = true;
            } else {
                self.slots.granted(g.id.0 as u32, g.k, now);
            }
        }
        let changed = std::mem::take(&mut self.slots_changed);
        self.show_state(ctx, changed);
        // A TYPE2 segment waiting for room in the TYPE2 queue goes next cycle; else the next
        // retry deadline runs process 0.
        let t2_waiting = t2_room && self.seg_in.peek().is_some_and(|s| s.paxi.kind == FlitKind::Mul);
        let next = if t2_waiting {
            Wake::NextCycle
        } else {
            Wake::earliest(self.slots.next_deadline())
        };
        ctx.run_process_on(0, next);
        Wake::OnInput
    }
}

impl SlotFifoNode {
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
}
