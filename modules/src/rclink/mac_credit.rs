//! MAC credit of one LG, TX side: the MAC2TX credit counter that gates the bank arbiter, and
//! the multicast MAC TX credit counter that gates TYPE2 frames.
//!
//! Seed 000 «打包延迟与 MAC Credit» and «芯片级聚合发送 cap»: the MAC serializes a frame at the
//! SerDes line rate and releases its MAC2TX credit only once the frame is serialized; without a
//! credit the TX does not send. So the arbiter decides the next frame when the MAC frees up, not
//! when the previous frame starts (a one-frame holding register would arbitrate one frame early
//! and charge CBFC one frame early). Seed 002 «多播双重流控»: a TYPE2 frame also needs a
//! multicast MAC TX credit (a place in the MAC's replication buffer), back with its MAC2TX
//! credit.
//!
//! ```text
//!                          +--------------------------------+
//!  credit ====(cap 8)===>  | process 0: + returns           | --> available     : comb signal<UInt<4>>
//!  stream<MacCreditRet>    |   (mul: the multicast one too) | --> mul_available : comb signal<u8>
//!  (from the MAC)          |                                |       (to the arbiter, same cycle)
//!  take ==(comb, cap 1)==> | process 1: − the grant's take  |
//!  stream<MacCreditTake>   |   (mul: both)                  |
//!  (from the arbiter)      +--------------------------------+
//! ```
//!
//! **Timing.** Process 0 takes in the MAC's returns of the cycle and shows the counts
//! combinationally; the arbiter reads them in the same cycle, grants, and pushes the take on
//! `take`; process 1 takes it in the same cycle (two processes of one block, ordered around the
//! arbiter: docs/kernel.md). So `available` at cycle n is what the round of n may use: the
//! count after n's returns, before n's grant; the grant's decrement shows at n + 1, as the
//! counter register's output does after the clock edge. The release time is the MAC's
//! (`mac_tx`, parameter `credit_lead`): it returns the credit `credit_lead` (2) cycles before its
//! serializer frees, the latency of this loop (the return register, then the grant register),
//! so the next frame reaches the serializer exactly as it frees and one LG still carries
//! 50 B/ns.
//!
//! **Where it runs.** As `chip.lgK.tx.mac_credit` inside `rclink_tx` (between the MAC's credit
//! return and the arbitration round of `vc_queues`), and alone in a module testbench: the
//! same block.
//!
//! Counters: `credits_returned` (MAC2TX credits back from the MAC), `credits_taken` (grants).
//! A return above the configured count, or a take without a credit, is a protocol violation.
//!
//! Deviations: the seed's event simulator arbitrates at the instant RcFrameDone fires; here the
//! round runs one cycle before the serializer frees (the loop's register stages), which is what
//! keeps the line rate exact in a clocked model. The multicast count is hwsim's (the seed gives
//! no size; `mul_credits` 4).

use hwsim_hw::{Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, PortDecl, StreamIn, Wake};
use hwsim_ports::{MacCreditRet, MacCreditTake, UInt};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "credits_returned",
        "credits",
        "MAC2TX credits given back by the MAC on `credit` (TYPE2 frames' included)",
    ),
    CounterDecl::new(
        "credits_taken",
        "credits",
        "MAC2TX credits taken by grants on `take` (TYPE2 frames' included)",
    ),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Most MAC credits per LG (a 4-bit counter).
pub const MAX_MAC_CREDITS: u32 = 8;
/// Most multicast MAC TX credits per LG.
pub const MAX_MUL_CREDITS: u32 = 64;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// MAC2TX credits, frames the TX may hand the MAC ahead of its serializer, 1..=8. The seed
    /// releases a credit per serialized frame and sends nothing without one: 1.
    pub credits: u32,
    /// Multicast MAC TX credits, TYPE2 frames the MAC's replication buffer may hold, 1..=64
    /// (hwsim's 4: the seed gives no size).
    pub mul_credits: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            credits: 1,
            mul_credits: 4,
        }
    }
}

/// The credit counter (no ports).
#[derive(Clone, Debug)]
pub struct MacCredit {
    available: u32,
    capacity: u32,
}

impl MacCredit {
    /// A full counter of `credits` (1..=`max`; the error names the parameter `name`).
    pub fn new(credits: u32, max: u32, name: &str) -> Result<MacCredit, String> {
        if !(1..=max).contains(&credits) {
            return Err(format!("{name} = {credits}: must be in 1..={max}"));
        }
        Ok(MacCredit {
            available: credits,
            capacity: credits,
        })
    }
    /// Credits available now.
    pub fn available(&self) -> u32 {
        self.available
    }
    /// One taken; without a credit, an error (the count stays 0).
    pub fn take(&mut self) -> Result<(), String> {
        if self.available == 0 {
            return Err("taken without a credit".to_string());
        }
        self.available -= 1;
        Ok(())
    }
    /// One back; more than were taken is an error (the count is clamped).
    pub fn give(&mut self) -> Result<(), String> {
        if self.available >= self.capacity {
            return Err(format!(
                "over-return: {} available + 1 returned > {} credits",
                self.available, self.capacity
            ));
        }
        self.available += 1;
        Ok(())
    }
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<MacCreditRet>("credit", 8)
            .optional()
            .doc("MAC2TX credit returns from the MAC, one per frame (`mul`: a TYPE2 frame's; unbound: none come back)"),
        PortDecl::comb_output::<UInt<4>>("available")
            .level()
            .doc("MAC2TX credits this cycle's grant may use (after this cycle's returns)"),
        PortDecl::comb_output::<u8>("mul_available")
            .level()
            .doc("multicast MAC TX credits this cycle's TYPE2 grant may use"),
        PortDecl::comb_stream_in::<MacCreditTake>("take", 1)
            .process(1)
            .doc("the grant of this cycle takes a credit (`mul`: a TYPE2 frame's, both counts)"),
    ]
}

/// The `mac_credit` block.
pub struct MacCreditBlock {
    credit: MacCredit,
    mul: MacCredit,
    credit_in: StreamIn<MacCreditRet>,
    take_in: StreamIn<MacCreditTake>,
    available: CombOut<UInt<4>>,
    mul_available: CombOut<u8>,
    c_returned: CounterId,
    c_taken: CounterId,
}

/// Binds ports; refuses counts out of range.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(MacCreditBlock {
        credit: MacCredit::new(p.credits, MAX_MAC_CREDITS, "credits")?,
        mul: MacCredit::new(p.mul_credits, MAX_MUL_CREDITS, "mul_credits")?,
        credit_in: b.stream_in("credit")?,
        take_in: b.stream_in("take")?,
        available: b.comb_output("available")?,
        mul_available: b.comb_output("mul_available")?,
        c_returned: b.counter("credits_returned"),
        c_taken: b.counter("credits_taken"),
    }))
}

impl Component for MacCreditBlock {
    /// Process 0: the MAC's returns, then the counts the round of this cycle sees.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(ret) = self.credit_in.pop() {
            if let Err(why) = self.credit.give() {
                ctx.violation(format!("mac_credit: MAC2TX credit {why}"));
            }
            // A TYPE2 frame's credit gives its multicast MAC TX credit back too (the message
            // says which frame it was: the MAC frees zero-byte frames ahead of the others).
            if ret.mul {
                if let Err(why) = self.mul.give() {
                    ctx.violation(format!(
                        "mac_credit: a TYPE2 credit returned, multicast MAC TX credit {why}"
                    ));
                }
            }
            ctx.count(self.c_returned, 1);
        }
        self.available.set(UInt::wrap(self.credit.available() as u64));
        self.mul_available.set(self.mul.available().min(255) as u8);
        Wake::OnInput
    }

    /// Process 1: the grant's take; the new counts show next cycle (process 0, asked for it).
    /// It runs only when a take comes (its one input): a cycle of returns alone is process 0's.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let Some(t) = self.take_in.pop() else {
            return Wake::OnInput;
        };
        if let Err(why) = self.credit.take() {
            ctx.violation(format!("mac_credit: MAC2TX credit {why}"));
        }
        if t.mul {
            if let Err(why) = self.mul.take() {
                ctx.violation(format!("mac_credit: multicast MAC TX credit {why}"));
            }
        }
        ctx.count(self.c_taken, 1);
        ctx.run_process(0);
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;

    #[test]
    fn counts_down_and_refuses_over_returns() {
        let mut m = MacCredit::new(1, MAX_MAC_CREDITS, "credits").unwrap();
        m.take().unwrap();
        assert!(m.take().unwrap_err().contains("without a credit"));
        m.give().unwrap();
        assert_eq!(m.available(), 1);
        assert!(m.give().unwrap_err().contains("over-return"));
        assert_eq!(m.available(), 1);
        assert!(MacCredit::new(0, MAX_MAC_CREDITS, "mac_credits")
            .unwrap_err()
            .contains("mac_credits = 0"));
        assert!(MacCredit::new(9, MAX_MAC_CREDITS, "credits").is_err());
    }

    fn bench(skip: bool) -> Harness {
        let p = Params {
            credits: 2,
            mul_credits: 1,
        };
        let q = p.clone();
        let mut h = Harness::new("mac_credit", ports(&p), Box::new(move |b| build(&q, b)), 1, 4).unwrap();
        h.sim_mut().set_skip(skip);
        h
    }

    #[test]
    fn a_take_shows_next_cycle_and_a_return_in_its_own() {
        for skip in [true, false] {
            let mut h = bench(skip);
            h.step().unwrap();
            assert_eq!(h.peek::<UInt<4>>("available").0, 2);
            // A take at 1 (a comb input: seen at 1) shows at 2.
            assert!(h.push("take", MacCreditTake { mul: true }));
            h.step().unwrap();
            assert_eq!(h.peek::<UInt<4>>("available").0, 2, "the round of 1 saw 2");
            h.step().unwrap();
            assert_eq!(h.peek::<UInt<4>>("available").0, 1);
            assert_eq!(h.peek::<u8>("mul_available"), 0);
            // A return pushed at 2 is taken in at 3 and shows at 3.
            assert!(h.push("credit", MacCreditRet { mul: true }));
            h.step().unwrap();
            h.step().unwrap();
            assert_eq!(h.peek::<UInt<4>>("available").0, 2);
            assert_eq!(h.peek::<u8>("mul_available"), 1);
            assert_eq!(h.sim().counter("dut.credits_taken"), Some(1));
            assert_eq!(h.sim().counter("dut.credits_returned"), Some(1));
        }
    }

    #[test]
    fn a_take_without_a_credit_is_a_violation() {
        let mut h = bench(true);
        h.step().unwrap();
        assert!(h.push("take", MacCreditTake { mul: true }));
        h.step().unwrap();
        h.step().unwrap();
        assert!(h.push("take", MacCreditTake { mul: true }));
        let e = h.step().unwrap_err().to_string();
        assert!(e.contains("multicast MAC TX credit taken without a credit"), "{e}");
    }
}
