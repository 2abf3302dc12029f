//! Queue-pair ids and VC banks (seed 000 «PSN 管理» QP ID encoding, «名词定义»; seed 002: up to
//! 1024 QPs).
//!
//! The QP id is the hardware-visible field `{XPU_ID, BANK}`. hwsim synthesises it from a CDMA
//! instance number as `qp_id = (cdma_id << 2) | (cdma_id mod 4)` (BANK_W = 2, NUM_BANK = 4), and
//! the VC bank a packet joins is `qp_id & 3`.
//!
//! hwsim's reading of the spec: the QP field is 10 bits wide (1024 QPs), its low 2 bits are the
//! bank and its upper 8 bits the XPU id, so `xpu_id = qp_id >> 2` (and CDMA ids 0..=255 are
//! valid). The seeds state `{XPU_ID, BANK}` and the 1024-QP limit but not the XPU_ID width; the
//! 8 bits follow from the two.

use hwsim_hw::value::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

use crate::error::PortsError;

/// Index of one of the four TX VC banks (0..=3): the low 2 bits of a QP id.
///
/// Checked on construction; serialized as a plain integer; traced as 2 bits. (The multicast MUL
/// channel is a fifth TX VC but not a bank, so it is not a `VcBank`.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u8")]
pub struct VcBank(u8);

impl VcBank {
    /// Width of the bank index in bits (BANK_W).
    pub const BITS: u32 = 2;
    /// Number of banks (NUM_BANK).
    pub const COUNT: u8 = 1 << Self::BITS;

    /// A bank index in 0..=3.
    pub const fn new(bank: u8) -> Result<VcBank, PortsError> {
        if bank < Self::COUNT {
            Ok(VcBank(bank))
        } else {
            Err(PortsError::OutOfRange {
                field: "VC bank",
                value: bank as u64,
                min: 0,
                max: (Self::COUNT - 1) as u64,
            })
        }
    }

    /// The index, 0..=3.
    pub const fn value(self) -> u8 {
        self.0
    }

    /// The index as a `usize`, for indexing per-bank arrays.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// All four banks in order.
    pub const ALL: [VcBank; 4] = [VcBank(0), VcBank(1), VcBank(2), VcBank(3)];
}

impl TryFrom<u64> for VcBank {
    type Error = PortsError;
    fn try_from(value: u64) -> Result<Self, Self::Error> {
        match u8::try_from(value) {
            Ok(v) => VcBank::new(v),
            Err(_) => Err(PortsError::out_of_range("VC bank", value, 3)),
        }
    }
}

impl From<VcBank> for u8 {
    fn from(bank: VcBank) -> u8 {
        bank.0
    }
}

impl std::fmt::Display for VcBank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Trace for VcBank {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", VcBank::BITS)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.0.into());
    }
}

/// A queue-pair id: the 10-bit hardware field `{XPU_ID[7:0], BANK[1:0]}`, 0..=1023.
///
/// Serialized as a plain integer; traced as one 10-bit field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u16")]
pub struct QpId(u16);

impl QpId {
    /// Width of the field in bits.
    pub const BITS: u32 = 10;
    /// Number of QP ids: 1024.
    pub const COUNT: u16 = 1 << Self::BITS;
    /// The largest QP id, 1023.
    pub const MAX: QpId = QpId(Self::COUNT - 1);
    /// The largest CDMA id that [`QpId::from_cdma`] accepts (the XPU_ID field is 8 bits).
    pub const MAX_CDMA_ID: u16 = Self::MAX.0 >> VcBank::BITS;

    /// A QP id in 0..=1023; anything larger is an error.
    pub const fn new(qp: u16) -> Result<QpId, PortsError> {
        if qp < Self::COUNT {
            Ok(QpId(qp))
        } else {
            Err(PortsError::OutOfRange {
                field: "QP id",
                value: qp as u64,
                min: 0,
                max: Self::MAX.0 as u64,
            })
        }
    }

    /// The QP id of CDMA instance `cdma_id`: `(cdma_id << 2) | (cdma_id mod 4)` (seed 000
    /// «PSN 管理»). CDMA ids above 255 do not fit the 10-bit field and are an error.
    pub const fn from_cdma(cdma_id: u16) -> Result<QpId, PortsError> {
        if cdma_id > Self::MAX_CDMA_ID {
            return Err(PortsError::OutOfRange {
                field: "CDMA id",
                value: cdma_id as u64,
                min: 0,
                max: Self::MAX_CDMA_ID as u64,
            });
        }
        Ok(QpId((cdma_id << VcBank::BITS) | (cdma_id % VcBank::COUNT as u16)))
    }

    /// The QP id `{xpu_id, bank}`; cannot fail.
    pub const fn from_parts(xpu_id: u8, bank: VcBank) -> QpId {
        QpId(((xpu_id as u16) << VcBank::BITS) | bank.0 as u16)
    }

    /// The value, 0..=1023.
    pub const fn value(self) -> u16 {
        self.0
    }

    /// The value as a `usize`, for indexing per-QP tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The VC bank this QP's packets join: `qp_id & 3`.
    pub const fn vc_bank(self) -> VcBank {
        VcBank((self.0 & (VcBank::COUNT as u16 - 1)) as u8)
    }

    /// The XPU id: the upper 8 bits, `qp_id >> 2` (hwsim's reading of `{XPU_ID, BANK}`, see the
    /// module doc).
    pub const fn xpu_id(self) -> u8 {
        (self.0 >> VcBank::BITS) as u8
    }
}

impl TryFrom<u16> for QpId {
    type Error = PortsError;
    fn try_from(value: u16) -> Result<Self, Self::Error> {
        QpId::new(value)
    }
}

impl TryFrom<u32> for QpId {
    type Error = PortsError;
    fn try_from(value: u32) -> Result<Self, Self::Error> {
        QpId::try_from(u64::from(value))
    }
}

impl TryFrom<u64> for QpId {
    type Error = PortsError;
    fn try_from(value: u64) -> Result<Self, Self::Error> {
        match u16::try_from(value) {
            Ok(v) => QpId::new(v),
            Err(_) => Err(PortsError::out_of_range("QP id", value, QpId::MAX.0.into())),
        }
    }
}

impl From<QpId> for u16 {
    fn from(qp: QpId) -> u16 {
        qp.0
    }
}

impl From<QpId> for u64 {
    fn from(qp: QpId) -> u64 {
        qp.0.into()
    }
}

impl std::fmt::Display for QpId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Trace for QpId {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", QpId::BITS)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.0.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cdma_encoding() {
        // cdma 0 → 0b0000_0000_00; cdma 1 → (1<<2)|1 = 5; cdma 3 → 12|3 = 15; cdma 6 → 24|2 = 26.
        assert_eq!(QpId::from_cdma(0).unwrap().value(), 0);
        assert_eq!(QpId::from_cdma(1).unwrap().value(), 5);
        assert_eq!(QpId::from_cdma(3).unwrap().value(), 15);
        assert_eq!(QpId::from_cdma(6).unwrap().value(), 26);
        assert_eq!(QpId::from_cdma(6).unwrap().vc_bank().value(), 2);
        assert_eq!(QpId::from_cdma(6).unwrap().xpu_id(), 6);
        assert_eq!(QpId::from_cdma(255).unwrap().value(), 1023);
    }

    #[test]
    fn errors_pinned() {
        assert_eq!(
            QpId::new(1024).unwrap_err().to_string(),
            "QP id 1024 out of range 0..=1023"
        );
        assert_eq!(
            QpId::from_cdma(256).unwrap_err().to_string(),
            "CDMA id 256 out of range 0..=255"
        );
        assert_eq!(VcBank::new(4).unwrap_err().to_string(), "VC bank 4 out of range 0..=3");
        assert_eq!(
            QpId::try_from(100_000u32).unwrap_err().to_string(),
            "QP id 100000 out of range 0..=1023"
        );
    }

    #[test]
    fn trace_widths() {
        assert_eq!(QpId::fields(), &[TraceField::bits("", 10)]);
        assert_eq!(VcBank::fields(), &[TraceField::bits("", 2)]);
        let mut out = [TraceValue::default()];
        QpId::MAX.sample(&mut out);
        assert_eq!(out[0], TraceValue::Bits(1023));
    }

    #[test]
    fn serde_plain_integers() {
        let qp = QpId::new(13).unwrap();
        assert_eq!(serde_yaml::to_string(&qp).unwrap(), "13\n");
        assert_eq!(serde_yaml::from_str::<QpId>("13").unwrap(), qp);
        let err = serde_yaml::from_str::<QpId>("2000").unwrap_err().to_string();
        assert!(err.contains("QP id 2000 out of range 0..=1023"), "{err}");
        assert_eq!(serde_yaml::from_str::<VcBank>("3").unwrap(), VcBank::ALL[3]);
    }

    proptest! {
        #[test]
        fn cdma_reference_model(cdma in 0u16..256) {
            let qp = QpId::from_cdma(cdma).unwrap();
            prop_assert_eq!(qp.value(), cdma * 4 + cdma % 4);
            prop_assert_eq!(u16::from(qp.vc_bank().value()), cdma % 4);
            prop_assert_eq!(u16::from(qp.xpu_id()), cdma);
            prop_assert_eq!(QpId::from_parts(qp.xpu_id(), qp.vc_bank()), qp);
        }

        #[test]
        fn parts_round_trip(v in 0u16..1024) {
            let qp = QpId::new(v).unwrap();
            prop_assert_eq!(u16::from(qp.xpu_id()) * 4 + u16::from(qp.vc_bank().value()), v);
            prop_assert_eq!(QpId::from_parts(qp.xpu_id(), qp.vc_bank()), qp);
        }

        #[test]
        fn checked_range(v in any::<u16>()) {
            prop_assert_eq!(QpId::new(v).is_ok(), v < 1024);
            prop_assert_eq!(QpId::from_cdma(v).is_ok(), v < 256);
        }
    }
}
