//! RC Link RX credit return of one link group (seed 000 «RX 侧设计» «credit 返还»: «三条路径都
//! 返还 credit», CREDIT_RETURN_DELAY_NS; appendix C «RX 参数»; seed 002 «CBFC 详细行为»; SPEC.md
//! «RX side»): the CBFC credits the PSN check charged for each arrival go back to their sender
//! `credit_return_delay` cycles later, summed per cycle and `(sender, VC)`, one message per
//! cycle. A netlist node of `rclink_rx` (`chip.lgK.rx.credit_return`), after the PSN check.
//!
//! ```text
//!                          +-------------------------------------------+
//!  charge ==(comb ×256)==> | due = now + credit_return_delay           | ==> credit : stream<CreditMsg>
//!  stream<CreditMsg>       | queue by due cycle; one (due, dst, vc)    |     (MAC control path), the
//!  (from psn_check, one    |  entry summed up to the 15-bit field      |     oldest due, one per cycle
//!   per arrival)           | pushed while not paused                   |
//!  pause --------------->  |  (PAXI's RX VC watermark: CBFC hold)      | --> credits_due : signal<CreditCount>
//!  signal<u8> (optional)   +-------------------------------------------+
//! ```
//!
//! **Rule** (the PSN check's before it was cut out, to the cycle): a charge `{src: chip, dst:
//! sender, lg, vc, credits}` taken at cycle n is due at n + `credit_return_delay`; it is added to
//! the queued entry of the same due cycle, `dst` and `vc` if the sum stays within the 15-bit
//! credit field, else queued as a new entry. Due cycles only grow (now + a constant), so the
//! queue stays in due order. Each cycle, if the `credit` stream has room and `pause` is 0, the
//! oldest entry whose due cycle has come leaves, stamped `sent_at` = now.
//!
//! **Back-pressure** (`pause`, bound by the system form to PAXI's RX VC watermark; unbound it
//! reads 0): while it is non-zero no credit returns, so the senders stop when their CBFC credit
//! runs out (the seed's TX_PFC_REQ_O shared by PFC and CBFC; hwsim holds all of the LG's
//! returns, since one RC Link VC carries both PAXI REQ and RSP flits).
//!
//! **Latency**: a charge written at n (the `charge` stream is combinational: the PSN check runs
//! before this node in the same cycle) leaves at n + `credit_return_delay` if nothing older
//! waits, the stream has room and no pause holds it; the sender sees it one cycle later.
//!
//! **Counters**: `credits_returned` (credits pushed on `credit`). **Waves**: `credits_due` (16
//! bits: credits queued, not yet pushed).
//!
//! **Deviations and choices**:
//! - The seed makes one CreditReturn event per packet, `CREDIT_RETURN_DELAY_NS` after it. Here
//!   what falls due in one cycle for one `(dst, vc)` leaves as one message (the credits summed),
//!   and messages leave one per cycle (a stream's one push per cycle), the oldest first: in a
//!   system one packet arrives per LG per cycle, so a return waits only behind returns of other
//!   senders due the same cycle. The credits and their sum are the seed's.
//! - The PSN check charges once per arrival (a frame's packets share their sender and VC), so a
//!   sum that would pass the 15-bit field is split at an arrival's charge; the fused check split
//!   it at a packet's. They differ only when more than 32 767 credits fall due for one `(dst,
//!   vc)` in one cycle, which a system cannot reach (one packet per cycle, at most 44 credits).
//! - A full `credit` stream holds the queue; the node wakes when it drains.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, In, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{CreditCount, CreditMsg};
use serde::{Deserialize, Serialize};

use super::rx_ctrl::CHECK_WRITES;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "credits_returned",
    "credits",
    "CBFC credits pushed on `credit`",
)];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Largest credit count in one [`CreditMsg`]: the 15-bit CBFC counter.
pub const CREDIT_FIELD_MAX: u32 = 0x7FFF;

/// Parameters of one credit return (one per chip and LG); defaults from seed 000 appendix C.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// CREDIT_RETURN_DELAY_NS: cycles from arrival to the credit return, default 1.
    pub credit_return_delay: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params { credit_return_delay: 1 }
    }
}

/// Port list: `charge` (and the optional `pause`) in, `credit` out, the state.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<CreditMsg>("charge", CHECK_WRITES)
            .doc("credits the PSN check charged this cycle, one per arrival, to return after the delay"),
        PortDecl::stream_out::<CreditMsg>("credit").doc("CBFC credit returns per (src, vc) (MAC control path)"),
        PortDecl::input::<u8>("pause")
            .doc("PAXI RX VC buffer back-pressure (non-zero: hold credit returns)")
            .optional(),
        PortDecl::output::<CreditCount>("credits_due")
            .level()
            .doc("credits queued for return, not yet pushed"),
    ]
}

/// The return queue alone (no ports): entries by due cycle, summed per (due, dst, vc).
#[derive(Debug)]
pub struct CreditQueue {
    delay: u64,
    /// (due cycle, message), due cycles non-decreasing.
    q: VecDeque<(Cycle, CreditMsg)>,
    /// Sum of the credits in `q`.
    due: u32,
}

impl CreditQueue {
    /// An empty queue returning `delay` cycles after the charge.
    pub fn new(delay: u64) -> CreditQueue {
        CreditQueue {
            delay,
            q: VecDeque::with_capacity(64),
            due: 0,
        }
    }

    /// Queues charge `m` taken at `now`, summed with a queued entry of its due cycle, `dst` and
    /// `vc` where the 15-bit field allows.
    pub fn charge(&mut self, now: Cycle, m: CreditMsg) {
        let due = now + self.delay;
        let credits = u32::from(m.credits);
        self.due += credits;
        // Due cycles only grow (now + a constant), so the entries of `due` are at the tail.
        for (d, e) in self.q.iter_mut().rev() {
            if *d != due {
                break;
            }
            if e.dst == m.dst && e.vc == m.vc && u32::from(e.credits) + credits <= CREDIT_FIELD_MAX {
                e.credits += m.credits;
                return;
            }
        }
        self.q.push_back((due, CreditMsg { sent_at: 0, ..m }));
    }

    /// The oldest entry if it is due at `now`.
    pub fn pop(&mut self, now: Cycle) -> Option<CreditMsg> {
        if self.q.front().is_some_and(|(d, _)| *d <= now) {
            let (_, m) = self.q.pop_front()?;
            self.due -= u32::from(m.credits);
            return Some(m);
        }
        None
    }

    /// Due cycle of the oldest entry.
    pub fn next_due(&self) -> Option<Cycle> {
        self.q.front().map(|(d, _)| *d)
    }

    /// Credits queued and not yet popped.
    pub fn credits_due(&self) -> u32 {
        self.due
    }
}

/// The `credit_return` block.
struct CreditReturn {
    q: CreditQueue,
    charge: StreamIn<CreditMsg>,
    credit: StreamOut<CreditMsg>,
    pause: In<u8>,
    credits_due: Out<CreditCount>,
    c_returned: CounterId,
    /// Whether `credit` had room at the last drive (for the wake-up).
    credit_free: bool,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(CreditReturn {
        q: CreditQueue::new(p.credit_return_delay),
        charge: b.stream_in("charge")?,
        credit: b.stream_out("credit")?,
        pause: b.input("pause")?,
        credits_due: b.output("credits_due")?,
        c_returned: b.counter("credits_returned"),
        credit_free: false,
    }))
}

impl Component for CreditReturn {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(m) = self.charge.pop() {
            self.q.charge(now, m);
        }
        // PAXI's RX VC buffer above its high watermark: credits wait (CBFC back-pressure).
        let paused = self.pause.get() != 0;
        if !paused {
            self.credit_free = self.credit.can_push();
            if self.credit_free {
                if let Some(mut m) = self.q.pop(now) {
                    m.sent_at = now;
                    self.credit.push(m);
                    ctx.count(self.c_returned, m.credits.into());
                }
            }
        }
        self.credits_due.set(CreditCount(self.q.credits_due()));
        if paused {
            // The pause's release (an input change) wakes us.
            return Wake::OnInput;
        }
        // The oldest return's due cycle, or next cycle if it is overdue and the stream had
        // room (a full stream wakes us when it drains).
        Wake::earliest(match self.q.next_due() {
            Some(d) if d > now => Some(d),
            Some(_) if self.credit_free => Some(now + 1),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(dst: u16, vc: u8, credits: u16) -> CreditMsg {
        CreditMsg {
            src: 1,
            dst,
            lg: 0,
            vc,
            credits,
            sent_at: 99,
        }
    }

    /// Charges of one cycle sum per (dst, vc); the 15-bit field splits; entries leave in due
    /// order, each only once due.
    #[test]
    fn charges_sum_per_due_cycle_and_split_at_the_field() {
        let mut q = CreditQueue::new(2);
        q.charge(5, charge(3, 1, 6));
        q.charge(5, charge(3, 1, 7));
        q.charge(5, charge(4, 1, 1));
        q.charge(6, charge(3, 1, 2));
        assert_eq!(q.credits_due(), 16);
        assert_eq!(q.next_due(), Some(7));
        assert_eq!(q.pop(6), None, "not due yet");
        let m = q.pop(7).unwrap();
        assert_eq!((m.dst, m.vc, m.credits, m.sent_at), (3, 1, 13, 0));
        assert_eq!(q.pop(7).unwrap().dst, 4);
        assert_eq!(q.pop(7), None, "the next is due at 8");
        assert_eq!(q.pop(8).unwrap().credits, 2);
        assert_eq!(q.credits_due(), 0);
        // At the field's limit a new entry starts.
        q.charge(10, charge(3, 1, 0x7FFF));
        q.charge(10, charge(3, 1, 1));
        assert_eq!(q.pop(12).unwrap().credits, 0x7FFF);
        assert_eq!(q.pop(12).unwrap().credits, 1);
    }
}
