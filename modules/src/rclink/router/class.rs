//! The router's message classes (data frames, control, credit returns): a class's inputs and
//! outputs and one pass over it, which moves each input's head to its outputs when they can
//! take it (the router's block header says how; this is its per-class machinery).

use hwsim_hw::{StreamIn, StreamOut, Value};
use hwsim_ports::{frame_priority, mcast_group, ChipId, CreditMsg, Ctrl, DataFrame, LgId, Trust, ACK_VC};

use super::McastRoute;

/// Where a message goes.
pub(super) trait Routed {
    fn dst(&self) -> ChipId;
    fn lg(&self) -> LgId;
    /// The multicast group it is addressed to, if any (data frames only).
    fn group(&self) -> Option<u16> {
        None
    }
    /// Whether it goes to the LG's second local output when it is for this chip (the ACK-VC
    /// credit returns, which go to the RX rather than the TX).
    fn to_rx(&self) -> bool {
        false
    }
    /// The PFC priority a switch gives it, as a mask bit (data frames only; control and
    /// credits are never paused).
    fn pfc_bit(&self, _classify: (Trust, u8)) -> u8 {
        0
    }
}
impl Routed for DataFrame {
    fn pfc_bit(&self, (trust, default_priority): (Trust, u8)) -> u8 {
        1 << frame_priority(trust, default_priority, self)
    }
    fn dst(&self) -> ChipId {
        self.dst
    }
    fn group(&self) -> Option<u16> {
        mcast_group(self.dst)
    }
    fn lg(&self) -> LgId {
        self.lg
    }
}
impl Routed for Ctrl {
    fn dst(&self) -> ChipId {
        self.dst
    }
    fn lg(&self) -> LgId {
        self.lg
    }
}
impl Routed for CreditMsg {
    fn dst(&self) -> ChipId {
        self.dst
    }
    fn lg(&self) -> LgId {
        self.lg
    }
    fn to_rx(&self) -> bool {
        self.vc == ACK_VC
    }
}

/// One message class: its inputs (LGs, edges, then the credit class's TX returns) and outputs
/// (LGs, edges, then the credit class's RX outputs).
pub(super) struct Class<T: Value + Routed> {
    pub(super) inputs: Vec<StreamIn<T>>,
    pub(super) outputs: Vec<StreamOut<T>>,
    /// Index of LG 0's second local output (the RX's, for ACK-VC credits), if there are any.
    pub(super) rx_base: Option<usize>,
    pub(super) used: Vec<bool>,
    /// Per output, the priorities a PFC pause closes it for (edges of the data class only).
    pub(super) paused: Vec<u8>,
    /// How the switches classify a data frame into its priority (`trust`, `default_priority`).
    pub(super) classify: (Trust, u8),
    /// Scratch: the outputs of the message being moved (more than one for a multicast copy).
    pub(super) targets: Vec<usize>,
    /// Scratch: the inputs holding a message at the start of a pass, in index order.
    pub(super) ready: Vec<u32>,
}

/// Outcome of one pass over a class.
#[derive(Default)]
pub(super) struct Pass {
    pub(super) local: u64,
    pub(super) forwarded: u64,
    pub(super) moved: u64,
    /// Extra copies made of multicast frames (one message out to n outputs: n − 1).
    pub(super) copies: u64,
    pub(super) more: bool,
    pub(super) problem: Option<String>,
}

impl<T: Value + Routed> Class<T> {
    /// Every output `m` goes to, into `out`: one, or for a multicast frame the group's table
    /// entry (this chip's LG if a member, and the tree's edges).
    pub(super) fn targets(
        m: &T,
        me: ChipId,
        num_lg: usize,
        routes: &[Option<u32>],
        mcast: &[McastRoute],
        rx_base: Option<usize>,
        out: &mut Vec<usize>,
    ) -> Result<(), String> {
        out.clear();
        let Some(g) = m.group() else {
            let mut t = Self::target(m, me, num_lg, routes)?;
            if t < num_lg && m.to_rx() {
                let Some(base) = rx_base else {
                    return Err(format!(
                        "ACK-VC credit return, but this router has no RX outputs (ack_cbfc off): {m:?}"
                    ));
                };
                t += base;
            }
            out.push(t);
            return Ok(());
        };
        let Some(r) = mcast.get(g as usize) else {
            return Err(format!("multicast group {g} is not in this chip's table: {m:?}"));
        };
        if r.local {
            let k = m.lg() as usize;
            if k >= num_lg {
                return Err(format!("message for LG {k}, chip has {num_lg}: {m:?}"));
            }
            out.push(k);
        }
        out.extend(r.edges.iter().map(|&e| num_lg + e as usize));
        if out.is_empty() {
            return Err(format!("multicast group {g} has no way on from chip {me}: {m:?}"));
        }
        Ok(())
    }

    fn target(m: &T, me: ChipId, num_lg: usize, routes: &[Option<u32>]) -> Result<usize, String> {
        if m.dst() == me {
            let k = m.lg() as usize;
            if k >= num_lg {
                return Err(format!("message for LG {k}, chip has {num_lg}: {m:?}"));
            }
            Ok(k)
        } else {
            match routes.get(m.dst() as usize).copied().flatten() {
                Some(e) => Ok(num_lg + e as usize),
                None => Err(format!("no route to chip {}: {m:?}", m.dst())),
            }
        }
    }

    pub(super) fn pass(
        &mut self,
        now: u64,
        me: ChipId,
        num_lg: usize,
        routes: &[Option<u32>],
        mcast: &[McastRoute],
    ) -> Pass {
        let mut r = Pass::default();
        let n = self.inputs.len();
        // The inputs with a message, found in one tight walk (a router is woken by any of its
        // inputs and most are empty: the rotating walk below then visits only these). Only a
        // pass pops its inputs, and only the one it visits, so the set holds for the pass.
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        for (i, input) in self.inputs.iter().enumerate() {
            if !input.is_empty() {
                ready.push(i as u32);
            }
        }
        if ready.is_empty() {
            self.ready = ready;
            return r;
        }
        let mut t = std::mem::take(&mut self.targets);
        // Rotate the service order with time, so every input gets first pick in turn: the
        // inputs from `now mod n` up, then those below it.
        let first = (now % n as u64) as u32;
        let split = ready.partition_point(|&i| i < first);
        for &i in ready[split..].iter().chain(&ready[..split]) {
            let ii = i as usize;
            // The head's outputs and its PFC priority, read in place (no copy of a message
            // that cannot move yet).
            let (routed, bit) = match self.inputs[ii].peek() {
                None => continue,
                Some(head) => (
                    Self::targets(&*head, me, num_lg, routes, mcast, self.rx_base, &mut t),
                    head.pfc_bit(self.classify),
                ),
            };
            if let Err(e) = routed {
                r.problem.get_or_insert(e);
                continue;
            }
            // A multicast frame's copies leave together, when every output of its tree can
            // take one (the MAC's replication buffer holds it until then).
            if t.iter()
                .all(|&o| !self.used[o] && self.paused[o] & bit == 0 && self.outputs[o].can_push())
            {
                let m = self.inputs[ii].pop().expect("peeked");
                let (&last, rest) = t.split_last().expect("at least one output");
                for &o in rest {
                    self.outputs[o].push(m.clone());
                    self.used[o] = true;
                }
                self.outputs[last].push(m);
                self.used[last] = true;
                for &o in &t {
                    if o < num_lg {
                        r.local += 1;
                    } else {
                        r.forwarded += 1;
                    }
                }
                r.moved += 1;
                r.copies += t.len() as u64 - 1;
                // The next message, if any, is seen next cycle (wherever it goes).
                r.more |= !self.inputs[ii].is_empty();
            } else {
                // The head waits: again next cycle if its outputs will have room then (a
                // paused edge is reopened by an XON, a full stream wakes us when it drains).
                r.more |= t.iter().all(|&o| {
                    self.paused[o] & bit == 0 && self.outputs[o].space() as usize > usize::from(self.used[o])
                });
            }
        }
        self.targets = t;
        self.ready = ready;
        if r.moved > 0 {
            // Only a move marks an output used: a pass that moved nothing leaves none to clear.
            self.used.iter_mut().for_each(|u| *u = false);
        }
        r
    }
}
