//! The 12-bit packet sequence number ring (seed 000 «PSN 管理», «名词定义»).
//!
//! A PSN counts 0..=4095 and wraps, independently per (lg, dst, qp). Ordering is only meaningful
//! within half the ring: `before(a, b) = 0 < (b - a) mod 4096 < 2048`. Acknowledgements are
//! cumulative: an `ack_psn` is the next PSN the receiver expects.
//!
//! [`Psn`] deliberately implements neither `PartialOrd` nor `Ord`: a derived numeric order would
//! say 4090 > 5 where the ring says 4090 comes before 5. Use [`Psn::before`], [`Psn::after`],
//! [`Psn::distance`] or [`Psn::sort_from`].

use hwsim_hw::value::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

use crate::error::PortsError;

/// A packet sequence number: a 12-bit ring value in 0..=4095.
///
/// Built with a checked constructor ([`Psn::new`], `TryFrom`) or, when wrapping is what the
/// hardware does, with [`Psn::wrapping`]. Serialized as a plain integer. Traced as one 12-bit field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u16")]
pub struct Psn(u16);

impl Psn {
    /// Width of the field in bits.
    pub const BITS: u32 = 12;
    /// Number of distinct PSNs: 4096.
    pub const MODULUS: u16 = 1 << Self::BITS;
    /// Half the ring: 2048. `before` holds for forward distances 1..HALF.
    pub const HALF: u16 = Self::MODULUS / 2;
    /// The largest PSN, 4095.
    pub const MAX: Psn = Psn(Self::MODULUS - 1);
    /// PSN 0.
    pub const ZERO: Psn = Psn(0);

    const MASK: u16 = Self::MODULUS - 1;

    /// A PSN from a value in 0..=4095; anything larger is an error, not a mask.
    pub const fn new(value: u16) -> Result<Psn, PortsError> {
        if value < Self::MODULUS {
            Ok(Psn(value))
        } else {
            Err(PortsError::OutOfRange {
                field: "PSN",
                value: value as u64,
                min: 0,
                max: Self::MAX.0 as u64,
            })
        }
    }

    /// The PSN `value mod 4096`: the explicit way to reduce a wider counter onto the ring.
    pub const fn wrapping(value: u64) -> Psn {
        Psn((value % Self::MODULUS as u64) as u16)
    }

    /// The value, 0..=4095.
    pub const fn value(self) -> u16 {
        self.0
    }

    /// `self + n (mod 4096)`.
    #[must_use]
    pub const fn wrapping_add(self, n: u16) -> Psn {
        // u16 arithmetic wraps mod 65536, a multiple of 4096, so masking afterwards is exact.
        Psn(self.0.wrapping_add(n) & Self::MASK)
    }

    /// `self - n (mod 4096)`.
    #[must_use]
    pub const fn wrapping_sub(self, n: u16) -> Psn {
        Psn(self.0.wrapping_sub(n) & Self::MASK)
    }

    /// The following PSN, `self + 1 (mod 4096)`.
    #[must_use]
    pub const fn next(self) -> Psn {
        self.wrapping_add(1)
    }

    /// Forward distance from `self` to `to`: `(to - self) mod 4096`, in 0..=4095.
    pub const fn distance(self, to: Psn) -> u16 {
        to.0.wrapping_sub(self.0) & Self::MASK
    }

    /// `before(self, other)`: `0 < (other - self) mod 4096 < 2048`.
    ///
    /// before(4090, 5) holds (5 is 11 steps ahead); before(5, 4090) does not.
    pub const fn before(self, other: Psn) -> bool {
        let d = self.distance(other);
        d > 0 && d < Self::HALF
    }

    /// `after(self, other)` = `before(other, self)`.
    pub const fn after(self, other: Psn) -> bool {
        other.before(self)
    }

    /// Sorts `psns` in ring order starting at `ack_psn`, i.e. by `(psn - ack_psn) mod 4096`.
    ///
    /// This is the Go-Back-N resend order (seed 000 «Go-Back-N 重传»): after a NAK with `ack_psn`
    /// 7, WaitAck PSNs [9, 7, 8] are resent as [7, 8, 9]. The sort is stable.
    pub fn sort_from(ack_psn: Psn, psns: &mut [Psn]) {
        psns.sort_by_key(|psn| ack_psn.distance(*psn));
    }
}

impl std::fmt::Display for Psn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl TryFrom<u16> for Psn {
    type Error = PortsError;
    fn try_from(value: u16) -> Result<Self, Self::Error> {
        Psn::new(value)
    }
}

impl TryFrom<u32> for Psn {
    type Error = PortsError;
    fn try_from(value: u32) -> Result<Self, Self::Error> {
        Psn::try_from(u64::from(value))
    }
}

impl TryFrom<u64> for Psn {
    type Error = PortsError;
    fn try_from(value: u64) -> Result<Self, Self::Error> {
        match u16::try_from(value) {
            Ok(v) => Psn::new(v),
            Err(_) => Err(PortsError::out_of_range("PSN", value, Psn::MAX.0.into())),
        }
    }
}

impl From<Psn> for u16 {
    fn from(psn: Psn) -> u16 {
        psn.0
    }
}

impl From<Psn> for u32 {
    fn from(psn: Psn) -> u32 {
        psn.0.into()
    }
}

impl From<Psn> for u64 {
    fn from(psn: Psn) -> u64 {
        psn.0.into()
    }
}

impl Trace for Psn {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", Psn::BITS)];
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

    fn p(v: u16) -> Psn {
        Psn::new(v).unwrap()
    }

    #[test]
    fn constants() {
        assert_eq!(Psn::MODULUS, 4096);
        assert_eq!(Psn::HALF, 2048);
        assert_eq!(Psn::BITS, 12);
        assert_eq!(Psn::MAX.value(), 4095);
    }

    #[test]
    fn spec_before_cases() {
        assert!(p(4090).before(p(5)));
        assert!(!p(5).before(p(4090)));
        assert!(p(5).after(p(4090)));
        assert!(!p(7).before(p(7)), "a PSN is not before itself");
        // The half-ring boundary: 2047 ahead is before, 2048 ahead is not.
        assert!(p(0).before(p(2047)));
        assert!(!p(0).before(p(2048)));
        assert!(!p(2048).before(p(0)));
    }

    #[test]
    fn wrap_and_next() {
        assert_eq!(p(4095).next(), p(0));
        assert_eq!(p(4090).wrapping_add(11), p(5));
        assert_eq!(p(5).wrapping_sub(11), p(4090));
        assert_eq!(p(3).wrapping_add(u16::MAX), p(2));
        assert_eq!(p(4090).distance(p(5)), 11);
        assert_eq!(p(5).distance(p(4090)), 4085);
        assert_eq!(Psn::wrapping(4096 * 7 + 9), p(9));
    }

    #[test]
    fn gbn_sort_from_ack_psn() {
        let mut psns = [p(9), p(7), p(8)];
        Psn::sort_from(p(7), &mut psns);
        assert_eq!(psns, [p(7), p(8), p(9)]);
        // Across the wrap: ack 4094, in flight 1, 4095, 0, 4094.
        let mut psns = [p(1), p(4095), p(0), p(4094)];
        Psn::sort_from(p(4094), &mut psns);
        assert_eq!(psns, [p(4094), p(4095), p(0), p(1)]);
    }

    #[test]
    fn out_of_range_messages() {
        assert_eq!(
            Psn::new(4096).unwrap_err().to_string(),
            "PSN 4096 out of range 0..=4095"
        );
        assert_eq!(
            Psn::try_from(70_000u32).unwrap_err().to_string(),
            "PSN 70000 out of range 0..=4095"
        );
        assert_eq!(Psn::try_from(4095u64).unwrap(), p(4095));
        assert_eq!(Psn::try_from(12u16).unwrap(), p(12));
    }

    #[test]
    fn trace_is_one_12_bit_field() {
        assert_eq!(Psn::fields(), &[TraceField::bits("", 12)]);
        let mut out = [TraceValue::default()];
        p(4095).sample(&mut out);
        assert_eq!(out[0], TraceValue::Bits(4095));
    }

    #[test]
    fn serde_plain_integer() {
        assert_eq!(serde_yaml::to_string(&p(4094)).unwrap(), "4094\n");
        assert_eq!(serde_yaml::from_str::<Psn>("17").unwrap(), p(17));
        let err = serde_yaml::from_str::<Psn>("4096").unwrap_err().to_string();
        assert!(err.contains("PSN 4096 out of range 0..=4095"), "{err}");
    }

    proptest! {
        #[test]
        fn before_is_strict_in_half_ring(b in 0u16..4096, i in 0u16..2048, j in 0u16..2048) {
            prop_assume!(i < j);
            let base = p(b);
            prop_assert!(base.wrapping_add(i).before(base.wrapping_add(j)));
            prop_assert!(!base.wrapping_add(j).before(base.wrapping_add(i)));
        }

        #[test]
        fn before_is_antisymmetric(a in 0u16..4096, b in 0u16..4096) {
            prop_assert!(!(p(a).before(p(b)) && p(b).before(p(a))));
            // Exactly one holds unless equal or exactly half a ring apart.
            let d = p(a).distance(p(b));
            if d != 0 && d != Psn::HALF {
                prop_assert!(p(a).before(p(b)) ^ p(b).before(p(a)));
            }
        }

        #[test]
        fn wrapping_matches_u64_model(a in 0u16..4096, n in any::<u16>(), wide in any::<u64>()) {
            prop_assert_eq!(u64::from(p(a).wrapping_add(n).value()), (u64::from(a) + u64::from(n)) % 4096);
            prop_assert_eq!(
                u64::from(p(a).wrapping_sub(n).value()),
                (u64::from(a) + 4096 * 16 - u64::from(n) % 4096) % 4096
            );
            prop_assert_eq!(u64::from(Psn::wrapping(wide).value()), wide % 4096);
            prop_assert_eq!(p(a).wrapping_add(n).wrapping_sub(n), p(a));
            let b = Psn::wrapping(wide);
            prop_assert_eq!(
                u64::from(p(a).distance(b)),
                (u64::from(b.value()) + 4096 - u64::from(a)) % 4096
            );
            prop_assert_eq!(p(a).wrapping_add(p(a).distance(b)), b);
        }

        #[test]
        fn checked_construction_matches_range(v in any::<u32>()) {
            prop_assert_eq!(Psn::try_from(v).is_ok(), v < 4096);
        }

        #[test]
        fn sort_from_orders_by_forward_distance(ack in 0u16..4096, mut v in proptest::collection::vec(0u16..4096, 0..20)) {
            let mut psns: Vec<Psn> = v.iter().map(|x| p(*x)).collect();
            Psn::sort_from(p(ack), &mut psns);
            v.sort_by_key(|x| (u32::from(*x) + 4096 - u32::from(ack)) % 4096);
            prop_assert_eq!(psns, v.into_iter().map(p).collect::<Vec<_>>());
        }
    }
}
