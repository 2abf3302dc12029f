//! The TX's cycle (seed 000 «事件粒度»): `tick` runs its phases in this order, and the order is
//! the timing — slots an ACK frees at n take a segment at n, a segment taken at n may be granted
//! at n, one grant and one `FrameDone` per cycle.

use hwsim_hw::{Component, Ctx, Cycle, Wake};

use super::RcLinkTx;

impl Component for RcLinkTx {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Nothing below acts on the mere fact of being ticked: every action follows an input, a
        // timer that is due, or a change of the MAC stream's space (see `mac_space_seen`).
        if self.frame_out.space() > self.mac_space_seen {
            self.arb_pending = true;
        }
        // ACKs first: slots they free can take a waiting segment in the same cycle.
        self.take_ctrl(ctx, now);
        let ack_return_next = self.ack_return.as_mut().and_then(|r| r.drive(ctx));
        self.take_credits(ctx, now);
        self.take_mac_credits(ctx);
        self.slots.expire_timeouts(ctx, &self.sc, now);
        self.expire_rate_timers(ctx, now);
        self.take_segments(ctx);
        self.map_new_flows();
        let done_pushed = self.push_done();
        let changed = self.run_round(ctx, now);
        self.show_state(ctx, changed);
        self.show_dcqcn(ctx);
        self.next_wake(done_pushed, ack_return_next)
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

    /// Next cycle while a round or a `FrameDone` is pending; else the earliest retry deadline,
    /// DCQCN timer or ACK-VC return.
    fn next_wake(&mut self, done_pushed: bool, ack_return_next: Option<Cycle>) -> Wake {
        let deadline = [self.slots.next_deadline(), self.rate_gate.next_event()]
            .into_iter()
            .flatten()
            .min();
        let done_more = self.slots.done_waiting() > 0 && done_pushed && self.done_out.space() > 1;
        if self.arb_pending || done_more {
            Wake::NextCycle
        } else {
            Wake::earliest(deadline.into_iter().chain(ack_return_next))
        }
    }
}
