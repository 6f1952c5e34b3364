//! BLS12-381 values for Michelson's `bls12_381_fr`, `bls12_381_g1` and `bls12_381_g2` types and
//! the `ADD`, `MUL`, `NEG`, `INT` and `PAIRING_CHECK` instructions on them.
//!
//! Binary forms (michelson.rst, "Domain specific data"): `Fr` is 32 bytes little-endian (fewer
//! bytes are zero-extended, as Octez accepts `0x00`); G1 and G2 points are the uncompressed
//! big-endian encodings of the zkcrypto/ZCash serialization (96 and 192 bytes, with the
//! infinity flag for the identity). Reading checks that a scalar is below the group order and
//! that a point is on the curve and in the prime-order subgroup; nothing else can fail.
//!
//! Arithmetic is constant-time (zkcrypto `bls12_381`): operations cost the same whatever the
//! values, which keeps gas honest.

use std::fmt;
use std::ops::{Add, Mul, Neg};

use bls12_381::{G1Affine, G1Projective, G2Affine, G2Prepared, G2Projective, Gt, Scalar};
use num_bigint::{BigInt, Sign};

use crate::error::CryptoError;

/// An element of the scalar field of BLS12-381 (integers modulo the group order r),
/// Michelson's `bls12_381_fr`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fr(Scalar);

impl Fr {
    /// The size of the binary form in bytes.
    pub const SIZE_BYTES: usize = 32;
    const WHAT: &'static str = "bls12_381_fr";

    /// Zero.
    pub fn zero() -> Self {
        Self(Scalar::zero())
    }

    /// One.
    pub fn one() -> Self {
        Self(Scalar::one())
    }

    /// Reads the binary form: at most 32 bytes, little-endian, zero-extended, below r.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        if bytes.len() > Self::SIZE_BYTES {
            return Err(CryptoError::length(
                Self::WHAT,
                Self::SIZE_BYTES,
                bytes.len(),
            ));
        }
        let mut padded = [0u8; 32];
        padded[..bytes.len()].copy_from_slice(bytes);
        Option::from(Scalar::from_bytes(&padded))
            .map(Self)
            .ok_or(CryptoError::ScalarOutOfRange { what: Self::WHAT })
    }

    /// The binary form: 32 bytes, little-endian.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The residue of an integer modulo r (how Michelson reads an `int` literal as `Fr` and how
    /// `MUL` takes an `int` or `nat` operand); negative integers wrap.
    pub fn from_bigint(value: &BigInt) -> Self {
        let (sign, magnitude) = value.to_bytes_le();
        // Horner's rule over 256-bit limbs, most significant first: each limb is reduced as a
        // 512-bit value, and the accumulator is shifted by multiplying by 2^256 mod r.
        let shift = {
            let mut wide = [0u8; 64];
            wide[32] = 1;
            Scalar::from_bytes_wide(&wide)
        };
        let mut accumulator = Scalar::zero();
        for limb in magnitude.chunks(32).rev() {
            let mut wide = [0u8; 64];
            wide[..limb.len()].copy_from_slice(limb);
            accumulator = accumulator * shift + Scalar::from_bytes_wide(&wide);
        }
        if sign == Sign::Minus {
            accumulator = -accumulator;
        }
        Self(accumulator)
    }

    /// The representative in `[0, r)` as an integer (`INT`).
    pub fn to_bigint(&self) -> BigInt {
        BigInt::from_bytes_le(Sign::Plus, &self.to_bytes())
    }
}

impl Add for Fr {
    type Output = Fr;
    fn add(self, other: Fr) -> Fr {
        Fr(self.0 + other.0)
    }
}

impl Mul for Fr {
    type Output = Fr;
    fn mul(self, other: Fr) -> Fr {
        Fr(self.0 * other.0)
    }
}

impl Neg for Fr {
    type Output = Fr;
    fn neg(self) -> Fr {
        Fr(-self.0)
    }
}

impl fmt::Debug for Fr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fr(0x{})", hex_string(&self.to_bytes()))
    }
}

/// A point of the G1 group of BLS12-381, Michelson's `bls12_381_g1`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct G1(G1Projective);

impl G1 {
    /// The size of the binary form in bytes.
    pub const SIZE_BYTES: usize = 96;
    const WHAT: &'static str = "bls12_381_g1";

    /// The identity (point at infinity).
    pub fn identity() -> Self {
        Self(G1Projective::identity())
    }

    /// The standard generator.
    pub fn generator() -> Self {
        Self(G1Projective::generator())
    }

    /// Reads the 96-byte uncompressed form, checking the point is in the subgroup.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        let bytes: &[u8; 96] = bytes
            .try_into()
            .map_err(|_| CryptoError::length(Self::WHAT, Self::SIZE_BYTES, bytes.len()))?;
        Option::<G1Affine>::from(G1Affine::from_uncompressed(bytes))
            .map(|point| Self(point.into()))
            .ok_or(CryptoError::InvalidPoint { what: Self::WHAT })
    }

    /// The 96-byte uncompressed form.
    pub fn to_bytes(&self) -> [u8; 96] {
        G1Affine::from(self.0).to_uncompressed()
    }

    /// Whether this is the identity.
    pub fn is_identity(&self) -> bool {
        self.0.is_identity().into()
    }
}

impl Add for G1 {
    type Output = G1;
    fn add(self, other: G1) -> G1 {
        G1(self.0 + other.0)
    }
}

impl Mul<Fr> for G1 {
    type Output = G1;
    fn mul(self, scalar: Fr) -> G1 {
        G1(self.0 * scalar.0)
    }
}

impl Neg for G1 {
    type Output = G1;
    fn neg(self) -> G1 {
        G1(-self.0)
    }
}

impl fmt::Debug for G1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "G1(0x{})", hex_string(&self.to_bytes()))
    }
}

/// A point of the G2 group of BLS12-381, Michelson's `bls12_381_g2`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct G2(G2Projective);

impl G2 {
    /// The size of the binary form in bytes.
    pub const SIZE_BYTES: usize = 192;
    const WHAT: &'static str = "bls12_381_g2";

    /// The identity (point at infinity).
    pub fn identity() -> Self {
        Self(G2Projective::identity())
    }

    /// The standard generator.
    pub fn generator() -> Self {
        Self(G2Projective::generator())
    }

    /// Reads the 192-byte uncompressed form, checking the point is in the subgroup.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        let bytes: &[u8; 192] = bytes
            .try_into()
            .map_err(|_| CryptoError::length(Self::WHAT, Self::SIZE_BYTES, bytes.len()))?;
        Option::<G2Affine>::from(G2Affine::from_uncompressed(bytes))
            .map(|point| Self(point.into()))
            .ok_or(CryptoError::InvalidPoint { what: Self::WHAT })
    }

    /// The 192-byte uncompressed form.
    pub fn to_bytes(&self) -> [u8; 192] {
        G2Affine::from(self.0).to_uncompressed()
    }

    /// Whether this is the identity.
    pub fn is_identity(&self) -> bool {
        self.0.is_identity().into()
    }
}

impl Add for G2 {
    type Output = G2;
    fn add(self, other: G2) -> G2 {
        G2(self.0 + other.0)
    }
}

impl Mul<Fr> for G2 {
    type Output = G2;
    fn mul(self, scalar: Fr) -> G2 {
        G2(self.0 * scalar.0)
    }
}

impl Neg for G2 {
    type Output = G2;
    fn neg(self) -> G2 {
        G2(-self.0)
    }
}

impl fmt::Debug for G2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "G2(0x{})", hex_string(&self.to_bytes()))
    }
}

/// `PAIRING_CHECK`: whether the product of the pairings `e(g1, g2)` over `pairs` is the identity
/// of the target group (true for no pairs). One shared Miller loop and one final exponentiation.
pub fn pairing_check(pairs: &[(G1, G2)]) -> bool {
    let affine: Vec<(G1Affine, G2Prepared)> = pairs
        .iter()
        .map(|(g1, g2)| (G1Affine::from(g1.0), G2Prepared::from(G2Affine::from(g2.0))))
        .collect();
    let terms: Vec<(&G1Affine, &G2Prepared)> = affine.iter().map(|(a, b)| (a, b)).collect();
    bls12_381::multi_miller_loop(&terms).final_exponentiation() == Gt::identity()
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
