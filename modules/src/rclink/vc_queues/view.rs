//! The VC queues' depths on the waves (`depth_vc0..4`; the TX exports them as
//! `tx.slot_fifo.depth_vc*`).

use hwsim_hw::{Binder, Out, PortDecl};
use hwsim_ports::UInt;

use super::{QueueEntry, VcQueues};
use crate::rclink::bank_arbiter::NUM_VC;

/// The VC queues' depths on the waves, `{prefix}depth_vc{v}`.
pub struct DepthView {
    depth: Vec<Out<UInt<11>>>,
}

impl DepthView {
    /// Port declarations.
    pub fn ports(prefix: &str) -> Vec<PortDecl> {
        (0..NUM_VC)
            .map(|vc| {
                PortDecl::output::<UInt<11>>(&format!("{prefix}depth_vc{vc}"))
                    .level()
                    .doc("frames with WaitGrant packets queued on the VC (4 = MUL)")
            })
            .collect()
    }
    /// Binds the signals.
    pub fn bind(prefix: &str, b: &Binder) -> Result<DepthView, String> {
        Ok(DepthView {
            depth: (0..NUM_VC)
                .map(|vc| b.output(&format!("{prefix}depth_vc{vc}")))
                .collect::<Result<_, _>>()?,
        })
    }
    /// Shows the depths.
    pub fn show<E: QueueEntry>(&self, q: &VcQueues<E>) {
        for (vc, o) in self.depth.iter().enumerate() {
            o.update(UInt::wrap(q.depth(vc) as u64));
        }
    }
}
