//! MAC credit of one LG, TX side: the MAC2TX credit counter that gates the bank arbiter.
//!
//! Seed 000 «打包延迟与 MAC Credit» and «芯片级聚合发送 cap»: the MAC serializes a frame at the
//! SerDes line rate and releases its MAC2TX credit only once the frame is serialized; without a
//! credit the TX does not send. So the arbiter decides the next frame when the MAC frees up, not
//! when the previous frame starts (a one-frame holding register would arbitrate one frame early
//! and charge CBFC one frame early).
//!
//! ```text
//!                         +---------------------------+
//!  frame_in  ==(cap 1)==> | pass a frame iff          | ==> frame_out : stream<DataFrame> (to mac_tx.in)
//!  stream<DataFrame>      |   available > 0;          |
//!  credit    ==(cap 8)==> | available −1 per frame,   | --> available : signal<UInt<4>>
//!  stream<MacCreditRet>   |   + 1 per return          |
//!  (from the MAC)         |                           |
//!                         +---------------------------+
//! ```
//!
//! The release time is the MAC's (`mac_tx`, parameter `credit_lead`): it returns the credit
//! `credit_lead` (2) cycles before its serializer frees, the latency of this loop (the return
//! register, then the grant register), so the next frame reaches the serializer exactly as it
//! frees and one LG still carries 50 B/ns.
//!
//! **Standalone block** (`mac_credit`): the frame at the head of `frame_in` goes to `frame_out`
//! in the cycle it is visible if a credit is available; else it waits and `diag_arb_tx_busy`
//! counts the hold (once per frame). Latency 0 (frame visible at n → pushed at n, seen at n+1).
//! **In `rclink_tx`** the counter ([`MacCredit`]) is checked before each arbitration round; a
//! round skipped for want of a credit counts in `diag_arb_tx_busy` and shows on
//! `tx.mac_credit.available`.
//!
//! Counters (standalone): `diag_arb_tx_busy`, `frames`, `credits_returned`.
//!
//! Deviations: the seed's event simulator arbitrates at the instant RcFrameDone fires; here the
//! round runs one cycle before the serializer frees (the loop's register stages), which is what
//! keeps the line rate exact in a clocked model.

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{DataFrame, MacCreditRet, UInt};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "diag_arb_tx_busy",
        "frames",
        "frames held at the head of `frame_in` for want of a MAC credit (once each)",
    ),
    CounterDecl::new("frames", "frames", "frames passed to `frame_out` (one MAC credit each)"),
    CounterDecl::new(
        "credits_returned",
        "credits",
        "MAC2TX credits given back by the MAC on `credit`",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Most MAC credits per LG (a 4-bit counter).
pub const MAX_MAC_CREDITS: u32 = 8;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// MAC2TX credits, frames the TX may hand the MAC ahead of its serializer, 1..=8. The seed
    /// releases a credit per serialized frame and sends nothing without one: 1.
    pub credits: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { credits: 1 }
    }
}

/// The credit counter (no ports).
#[derive(Clone, Debug)]
pub struct MacCredit {
    available: u32,
    capacity: u32,
}

impl MacCredit {
    /// A full counter of `credits` (1..=8; the error names the parameter `name`).
    pub fn new(credits: u32, name: &str) -> Result<MacCredit, String> {
        if !(1..=MAX_MAC_CREDITS).contains(&credits) {
            return Err(format!("{name} = {credits}: must be in 1..={MAX_MAC_CREDITS}"));
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
    /// Whether a frame may be sent.
    pub fn can_send(&self) -> bool {
        self.available > 0
    }
    /// One frame sent.
    pub fn take(&mut self) {
        debug_assert!(self.available > 0);
        self.available -= 1;
    }
    /// `n` credits back from the MAC; more than were taken is an error (the count is clamped).
    pub fn give(&mut self, n: u32) -> Result<(), String> {
        let after = self.available + n;
        self.available = after.min(self.capacity);
        if after > self.capacity {
            return Err(format!(
                "MAC credit over-return: {} available + {n} returned > {} credits",
                after - n,
                self.capacity
            ));
        }
        Ok(())
    }
    /// The value shown on the waves.
    pub fn shown(&self) -> UInt<4> {
        UInt::wrap(self.available as u64)
    }
}

/// Port list of the standalone block.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<DataFrame>("frame_in", 1).doc("frames the arbiter granted"),
        PortDecl::stream_in::<MacCreditRet>("credit", 8)
            .doc("MAC2TX credit returns from the MAC, one per frame (`mul`: a TYPE2 frame's)"),
        PortDecl::stream_out::<DataFrame>("frame_out").doc("frames handed to the MAC"),
        PortDecl::output::<UInt<4>>("available")
            .level()
            .doc("MAC credits available"),
    ]
}

/// The standalone `mac_credit` block.
pub struct MacCreditBlock {
    credit: MacCredit,
    frame_in: StreamIn<DataFrame>,
    credit_in: StreamIn<MacCreditRet>,
    frame_out: StreamOut<DataFrame>,
    available: Out<UInt<4>>,
    /// The head frame was already counted as held.
    held_counted: bool,
    c_busy: CounterId,
    c_frames: CounterId,
    c_returned: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let credit = MacCredit::new(p.credits, "credits")?;
    let available = b.output("available")?;
    available.set(credit.shown());
    Ok(Box::new(MacCreditBlock {
        credit,
        frame_in: b.stream_in("frame_in")?,
        credit_in: b.stream_in("credit")?,
        frame_out: b.stream_out("frame_out")?,
        available,
        held_counted: false,
        c_busy: b.counter("diag_arb_tx_busy"),
        c_frames: b.counter("frames"),
        c_returned: b.counter("credits_returned"),
    }))
}

impl Component for MacCreditBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        while self.credit_in.pop().is_some() {
            if let Err(why) = self.credit.give(1) {
                ctx.violation(why);
            }
            ctx.count(self.c_returned, 1);
        }
        let mut sent = false;
        if !self.frame_in.is_empty() && self.frame_out.can_push() {
            if self.credit.can_send() {
                let f = self.frame_in.pop().expect("non-empty");
                self.credit.take();
                self.frame_out.push(f);
                self.held_counted = false;
                ctx.count(self.c_frames, 1);
                sent = true;
            } else if !self.held_counted {
                self.held_counted = true;
                ctx.count(self.c_busy, 1);
            }
        }
        self.available.update(self.credit.shown());
        Wake::next_cycle_if(sent && !self.frame_in.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_down_and_refuses_over_returns() {
        let mut m = MacCredit::new(1, "credits").unwrap();
        assert!(m.can_send());
        m.take();
        assert!(!m.can_send());
        m.give(1).unwrap();
        assert_eq!(m.available(), 1);
        assert!(m.give(1).unwrap_err().contains("over-return"));
        assert_eq!(m.available(), 1);
        assert!(MacCredit::new(0, "mac_credits")
            .unwrap_err()
            .contains("mac_credits = 0"));
        assert!(MacCredit::new(9, "credits").is_err());
    }
}
