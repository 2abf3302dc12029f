//! What the slot FIFO shows (seed 000 «Slot 管理»): the slot bitmaps, the `slots_used`,
//! `slots` and `depth_vc*` waves, and the `slots_in_use` gauge.

use hwsim_hw::{Binder, Ctx, Out, PortDecl};
use hwsim_ports::{SlotMap, SLOT_MAP_WORDS};

use super::{SlotCounters, SlotFifo};

impl SlotFifo {
    /// Slots 0..512 as bitmaps.
    pub fn slot_map(&self) -> SlotMap {
        let mut m = SlotMap::default();
        for (dst, src) in m.wait_grant.iter_mut().zip(self.wait_grant.as_raw_slice()) {
            *dst = *src;
        }
        for (dst, src) in m.wait_ack.iter_mut().zip(self.wait_ack.as_raw_slice()) {
            *dst = *src;
        }
        const { assert!(SLOT_MAP_WORDS * 64 >= 512) };
        m
    }

    /// Gauges at the end of a tick.
    pub fn update_gauges(&self, ctx: &mut Ctx<'_>, c: &SlotCounters) {
        ctx.set_counter(c.slots_in_use, self.used as u64);
    }
}

/// The slot FIFO's state on the waves: `{prefix}slots_used` and `{prefix}slots`, written by
/// [`SlotView::show`]; `slots_used` keeps its historic name on `rclink_tx` (no prefix). The VC
/// queues' depths (`depth_vc{v}`) are the `vc_queues` node's.
pub struct SlotView {
    used: Out<u16>,
    map: Out<SlotMap>,
}

impl SlotView {
    /// Port declarations.
    pub fn ports(prefix: &str, used_name: &str) -> Vec<PortDecl> {
        vec![
            PortDecl::output::<u16>(used_name)
                .level()
                .doc("slots not Empty, packets"),
            PortDecl::output::<SlotMap>(&format!("{prefix}slots"))
                .doc("slot states 0..511: WaitGrant and WaitAck bitmaps (neither = Empty)"),
        ]
    }
    /// Binds the signals.
    pub fn bind(prefix: &str, used_name: &str, b: &Binder) -> Result<SlotView, String> {
        Ok(SlotView {
            used: b.output(used_name)?,
            map: b.output(&format!("{prefix}slots"))?,
        })
    }
    /// Shows the state (call after a change).
    pub fn show(&self, s: &SlotFifo) {
        self.used.update(s.used as u16);
        self.map.update(s.slot_map());
    }
}
