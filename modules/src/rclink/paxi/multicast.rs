//! Multicast, TYPE2 (seed 002 «多播写请求流程», «TYPE2 OST», «B 响应延迟 = max», «多播超时»):
//! the MUL OST entries of the bursts sent to a group, the members' Bs (the last completes the
//! burst) and the timeout that gives a burst up.

use hwsim_hw::{Ctx, Cycle};

use super::dispatch::Paxi;

/// A MUL OST entry: a multicast burst waiting for the B of every member of its group.
#[derive(Clone, Copy)]
pub(super) struct MEntry {
    pub(super) txn: u64,
    pub(super) seq: u32,
    pub(super) bytes: u32,
    /// Members whose B has not come back.
    pub(super) left: u32,
    /// The cycle it is given up at (`mul_timeout` after it left).
    pub(super) deadline: Cycle,
}

impl Paxi {
    /// A member's B for MUL OST entry `i`: the last of the group completes the burst (so its
    /// latency is the slowest member's, seed 002 «B 响应延迟 = max»).
    pub(super) fn mul_b(&mut self, ctx: &mut Ctx<'_>, i: u8) {
        ctx.count(self.c.mul_b, 1);
        match self.m_tab.get_mut(i as usize).and_then(|x| x.as_mut()) {
            Some(m) if m.left > 0 => {
                m.left -= 1;
                if m.left == 0 {
                    let (txn, seq) = (m.txn, m.seq);
                    self.m_tab[i as usize] = None;
                    self.m_free.push(i);
                    self.burst_done(ctx, txn, seq, false);
                }
            }
            // Late (its burst timed out) or never sent.
            _ => ctx.count(self.c.b_stale, 1),
        }
    }

    /// Multicast bursts whose group has not answered by their deadline: given up, their
    /// transaction lost (TYPE2 has no retransmission).
    pub(super) fn mul_expire(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        for i in 0..self.m_tab.len() {
            let Some(m) = self.m_tab[i] else { continue };
            if m.deadline > now {
                continue;
            }
            self.m_tab[i] = None;
            self.m_free.push(i as u8);
            ctx.count(self.c.mul_timeouts, 1);
            ctx.count(self.c.mul_copy_failed, u64::from(m.bytes) * u64::from(m.left));
            self.burst_done(ctx, m.txn, m.seq, true);
        }
    }
}
