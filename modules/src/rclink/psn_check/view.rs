//! The PSN check's state on the waves (seed 000 «PSN 校验与三种结果»): the window the last
//! arrival touched, its EPSN and NAK state.

use hwsim_hw::{Binder, Out, PortDecl};
use hwsim_ports::{ChipId, Psn, QpId};

use super::PsnCheck;

/// The PSN check's state on the waves: signals named `{prefix}src` …; `prefix` is `""` for the
/// standalone block and `"psn_check."` inside `rclink_rx`.
pub struct PsnCheckView {
    src: Out<ChipId>,
    qp: Out<QpId>,
    epsn: Out<Psn>,
    nak_pending: Out<bool>,
}

impl PsnCheckView {
    /// The view's output ports.
    pub fn ports(prefix: &str) -> Vec<PortDecl> {
        vec![
            PortDecl::output::<ChipId>(&format!("{prefix}src")).doc("sender of the window the last arrival touched"),
            PortDecl::output::<QpId>(&format!("{prefix}qp")).doc("QP of the window the last arrival touched"),
            PortDecl::output::<Psn>(&format!("{prefix}epsn")).doc("EPSN of that window"),
            PortDecl::output::<bool>(&format!("{prefix}nak_pending"))
                .doc("a NAK was sent for that EPSN and no resend has moved it yet"),
        ]
    }

    /// Binds the view's ports.
    pub fn bind(prefix: &str, b: &mut Binder) -> Result<PsnCheckView, String> {
        Ok(PsnCheckView {
            src: b.output(&format!("{prefix}src"))?,
            qp: b.output(&format!("{prefix}qp"))?,
            epsn: b.output(&format!("{prefix}epsn"))?,
            nak_pending: b.output(&format!("{prefix}nak_pending"))?,
        })
    }

    /// Shows the core's state (a function of the state only, so ticking more often changes
    /// nothing).
    pub fn show(&self, core: &PsnCheck) {
        if let Some(((src, qp), epsn, nak)) = core.last_window() {
            self.src.set(src);
            self.qp.set(qp);
            self.epsn.set(epsn);
            self.nak_pending.set(nak);
        }
    }
}
