//! The TX's parameters checked: every value in its range, the frame header fields they select.
//! The error names the offending parameter (the testbench reader adds file, line and column).

use hwsim_ports::{FrameLayout, HeaderTags};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::super::bank_arbiter::BankArbiter;
use super::super::cbfc::{Cbfc, Params as CbfcParams, MAX_VIEW_DSTS};
use super::super::dcqcn::GateParams;
use super::super::mac_credit::{MacCredit, MAX_MAC_CREDITS, MAX_MUL_CREDITS};
use super::super::slot_fifo::SlotFifo;
use super::Params;

/// The TX's rate control: none, DCQCN (seed 000 «DCQCN 拥塞控制», the default) or the per-QP
/// window scheme (seed 002 / 003 «Per-QP 速率控制»: CC_WINDOW and length_thr, the `cc_window`
/// node). Written `false`, `true` (DCQCN, as before there was a choice), or by name: `off`,
/// `dcqcn`, `window`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateControl {
    /// No rate gate: CNPs are counted and dropped, CNP MERGE is off.
    Off,
    /// DCQCN per flow behind CNP MERGE (`tx.dcqcn`).
    #[default]
    Dcqcn,
    /// The per-QP time window and byte threshold (`tx.cc_window`); CNPs are reported, not acted on.
    Window,
}

impl RateControl {
    /// A rate gate node sits beside the core (DCQCN or the window).
    pub fn on(self) -> bool {
        self != RateControl::Off
    }
}

impl Serialize for RateControl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The two old settings keep their old spelling (a config written before reads the same).
        match self {
            RateControl::Off => s.serialize_bool(false),
            RateControl::Dcqcn => s.serialize_bool(true),
            RateControl::Window => s.serialize_str("window"),
        }
    }
}

impl<'de> Deserialize<'de> for RateControl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RateControl;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("false / off, true / dcqcn, or window")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RateControl, E> {
                Ok(if v { RateControl::Dcqcn } else { RateControl::Off })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RateControl, E> {
                match v {
                    "off" | "false" => Ok(RateControl::Off),
                    "dcqcn" | "true" => Ok(RateControl::Dcqcn),
                    "window" => Ok(RateControl::Window),
                    _ => Err(E::custom(format!(
                        "rate_control = {v}: must be false / off, true / dcqcn, or window"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Params {
    /// The header fields of this link's data frames; refuses `vlan` with `afh_lite` and a
    /// `data_priority` beyond 3 bits.
    pub fn header(&self) -> Result<HeaderTags, String> {
        self.tags("data_priority", self.data_priority)
    }

    /// The header fields of this link's TYPE2 (multicast) frames: `type2_priority`.
    pub fn type2_header(&self) -> Result<HeaderTags, String> {
        self.tags("type2_priority", self.type2_priority)
    }

    /// The header fields of this link's PAXI responses: as [`header`](Self::header), with
    /// `rsp_priority`.
    pub fn rsp_header(&self) -> Result<HeaderTags, String> {
        self.tags("rsp_priority", self.rsp_priority)
    }

    /// This link's layout tagged with priority `prio` (the parameter `name`): one rule for the
    /// data, response and TYPE2 headers.
    fn tags(&self, name: &str, prio: u8) -> Result<HeaderTags, String> {
        if prio > 7 {
            return Err(format!("{name} = {prio}: must be in 0..=7"));
        }
        let layout = FrameLayout::new(self.frame_format, self.vlan, false)
            .map_err(|e| format!("vlan = true: {e} (frame_format = {})", self.frame_format))?;
        Ok(HeaderTags::for_layout(layout, prio))
    }

    /// The parameters of this TX's DCQCN rate gate (the `dcqcn` node).
    pub fn rate_gate_params(&self) -> GateParams {
        GateParams {
            dcqcn: self.dcqcn.clone(),
            report_flows: self.report_flows.clone(),
            interval_bytes: self.pkt_ovhd as u64 + self.max_payload as u64,
        }
    }

    /// The parameters of this TX's CBFC controller (the `cbfc` node).
    pub fn cbfc_params(&self) -> CbfcParams {
        CbfcParams {
            chip: self.chip,
            lg: self.lg,
            credit_size: self.credit_size,
            pkt_ovhd: self.pkt_ovhd,
            uf_limit: self.uf_limit,
            initial_credits: self.initial_credits,
            view_dsts: self.view_dsts,
            dyn_uf_limit: self.dyn_uf_limit,
            vc_enable: self.cbfc_vc_enable,
            stop_cbfc: self.stop_cbfc,
            max_payload: self.max_payload,
            type2_credits: self.type2_credits,
            groups: self.groups.clone(),
        }
    }

    /// The parameters of this TX's TYPE2 queue (the `type2` node).
    pub fn type2_params(&self) -> crate::rclink::type2::Params {
        crate::rclink::type2::Params {
            chip: self.chip,
            lg: self.lg,
            max_payload: self.max_payload,
            credit_size: self.credit_size,
            pkt_ovhd: self.pkt_ovhd,
            uf_limit: self.uf_limit,
            type2_credits: self.type2_credits,
            vc_enable: self.cbfc_vc_enable,
            stop_cbfc: self.stop_cbfc,
            groups: self.groups.clone(),
            queue: self.type2_queue,
        }
    }

    /// Checks every parameter; the error names the offending one.
    pub fn check(&self) -> Result<(), String> {
        if self.lg > 7 {
            return Err(format!("lg = {}: must be in 0..=7", self.lg));
        }
        if self.view_dsts > MAX_VIEW_DSTS {
            return Err(format!(
                "view_dsts = {}: must be in 0..={MAX_VIEW_DSTS}",
                self.view_dsts
            ));
        }
        SlotFifo::new(self.slots, self.max_payload, self.max_retry, self.retry_timeout)?;
        self.header()?;
        self.rsp_header()?;
        Cbfc::new(self.credit_size, self.pkt_ovhd, self.uf_limit, self.initial_credits)?;
        BankArbiter::new(self.vc_weights)?;
        MacCredit::new(self.mac_credits, MAX_MAC_CREDITS, "mac_credits")?;
        MacCredit::new(self.mul_mac_credits, MAX_MUL_CREDITS, "mul_mac_credits")?;
        self.type2_header()?;
        Cbfc::new(self.credit_size, self.pkt_ovhd, self.uf_limit, self.type2_credits)
            .map_err(|e| format!("type2_credits: {e}"))?;
        if self.type2_queue == 0 || self.type2_queue > 256 {
            return Err(format!("type2_queue = {}: must be in 1..=256", self.type2_queue));
        }
        if self.groups.len() > 1 << 15 {
            return Err(format!("groups: {} groups, at most 32768", self.groups.len()));
        }
        if let Some(g) = self.groups.iter().position(|g| g.is_empty()) {
            return Err(format!("groups[{g}]: a group needs at least one member"));
        }
        self.rate_gate_params().check()?;
        self.window.check().map_err(|e| format!("window.{e}"))?;
        Ok(())
    }
}
