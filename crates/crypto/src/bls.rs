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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{hex_literals, read};

    /// The `on storage S and input I` arguments and the final storage of a recorded
    /// `octez-client run script` (michelson-regression `.out` files).
    fn recorded_run(text: &str) -> (String, String, String) {
        let command = text
            .lines()
            .find(|line| line.contains(" run script "))
            .unwrap();
        let after_storage = command.split(" on storage ").nth(1).unwrap();
        let (storage, rest) = after_storage.split_once(" and input ").unwrap();
        let input = rest.split(" --").next().unwrap();
        let mut lines = text.lines();
        lines.find(|line| *line == "storage").unwrap();
        let result = lines.next().unwrap().trim();
        let unquote = |s: &str| s.trim_matches('\'').to_owned();
        (unquote(storage), unquote(input), result.to_owned())
    }

    fn fr_literal(text: &str) -> Fr {
        match text.strip_prefix("0x") {
            Some(digits) => Fr::try_from_bytes(&hex::decode(digits).unwrap()).unwrap(),
            None => Fr::from_bigint(&text.parse::<BigInt>().unwrap()),
        }
    }

    #[test]
    fn fr_instructions_match_recorded_runs() {
        let Some(dir) =
            kestrel_testdata::require("michelson-regression/opcodes", "fr_instructions")
        else {
            return;
        };
        let mut count = 0;
        for path in kestrel_testdata::files_with_suffix(&dir, ".out") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let script = name.split("--").next().unwrap();
            const SCRIPTS: [&str; 7] = [
                "bls12_381_fr_z_int",
                "bls12_381_fr_z_nat",
                "bls12_381_z_fr_int",
                "bls12_381_z_fr_nat",
                "bls12_381_fr_to_int",
                "add_bls12_381_fr",
                "bls12_381_fr_push_bytes_not_padded",
            ];
            if !SCRIPTS.contains(&script) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let (storage, input, result) = recorded_run(&text);
            match script {
                // Storage (fr) times parameter (int or nat), in either operand order.
                "bls12_381_fr_z_int" | "bls12_381_fr_z_nat" | "bls12_381_z_fr_int"
                | "bls12_381_z_fr_nat" => {
                    let product = fr_literal(&storage) * fr_literal(&input);
                    assert_eq!(product, fr_literal(&result), "{name}");
                    // The other way round, multiplying field elements, gives the same.
                    let as_int = Fr::from_bigint(&input.parse::<BigInt>().unwrap());
                    assert_eq!(as_int * fr_literal(&storage), product, "{name}");
                }
                "bls12_381_fr_to_int" => {
                    assert_eq!(fr_literal(&input).to_bigint().to_string(), result, "{name}");
                }
                "add_bls12_381_fr" => {
                    let operands = hex_literals(&input);
                    let sum = Fr::try_from_bytes(&operands[0]).unwrap()
                        + Fr::try_from_bytes(&operands[1]).unwrap();
                    let expected = hex_literals(&result)[0].clone();
                    assert_eq!(sum.to_bytes().to_vec(), expected, "{name}");
                }
                "bls12_381_fr_push_bytes_not_padded" => {
                    assert_eq!(
                        fr_literal("0x00").to_bytes().to_vec(),
                        hex_literals(&result)[0]
                    );
                }
                _ => unreachable!("{script}"),
            }
            count += 1;
        }
        assert!(count >= 18, "only {count} recorded runs checked");
    }

    #[test]
    fn fr_byte_rules() {
        assert_eq!(Fr::try_from_bytes(&[]), Ok(Fr::zero()));
        assert_eq!(Fr::try_from_bytes(&[1, 0]), Ok(Fr::one()));
        assert_eq!(
            Fr::try_from_bytes(&[0; 33]),
            Err(CryptoError::WrongLength {
                what: "bls12_381_fr",
                expected: 32,
                found: 33
            })
        );
        // r itself is out of range; r - 1 is -1.
        let minus_one = Fr::from_bigint(&BigInt::from(-1));
        let mut r = minus_one.to_bytes();
        r[0] += 1;
        assert_eq!(
            Fr::try_from_bytes(&r),
            Err(CryptoError::ScalarOutOfRange {
                what: "bls12_381_fr"
            })
        );
        assert_eq!(minus_one + Fr::one(), Fr::zero());
        assert_eq!(-Fr::one(), minus_one);
        // Reduction of integers wider than 256 bits: r · 2^300 + 5 ≡ 5.
        let r_value = minus_one.to_bigint() + 1;
        let wide = (r_value << 300u32) + 5;
        assert_eq!(Fr::from_bigint(&wide), Fr::from_bigint(&BigInt::from(5)));
        assert_eq!(Fr::from_bigint(&-wide), -Fr::from_bigint(&BigInt::from(5)));
    }

    /// Every G1 and G2 point literal of the Groth16 verifier contract and the type examples of
    /// the Michelson reference.
    fn points() -> Option<(Vec<G1>, Vec<G2>)> {
        let contract = read("michelson/mini_scenarios/groth16.tz", "points")?;
        let mut g1 = Vec::new();
        let mut g2 = Vec::new();
        for bytes in hex_literals(&contract) {
            match bytes.len() {
                G1::SIZE_BYTES => g1.push(G1::try_from_bytes(&bytes).unwrap()),
                G2::SIZE_BYTES => g2.push(G2::try_from_bytes(&bytes).unwrap()),
                _ => {}
            }
        }
        let specs = kestrel_testdata::testdata_dir().join("../specs/michelson-meta.yaml");
        if let Ok(meta) = std::fs::read_to_string(specs) {
            for bytes in hex_literals(&meta) {
                match bytes.len() {
                    G1::SIZE_BYTES => g1.push(G1::try_from_bytes(&bytes).unwrap()),
                    G2::SIZE_BYTES => g2.push(G2::try_from_bytes(&bytes).unwrap()),
                    _ => {}
                }
            }
        }
        Some((g1, g2))
    }

    #[test]
    fn real_points_round_trip_and_pairings_are_bilinear() {
        let Some((g1, g2)) = points() else {
            return;
        };
        assert!(g1.len() >= 5 && g2.len() >= 4, "{} {}", g1.len(), g2.len());
        for point in &g1 {
            assert_eq!(G1::try_from_bytes(&point.to_bytes()), Ok(*point));
        }
        for point in &g2 {
            assert_eq!(G2::try_from_bytes(&point.to_bytes()), Ok(*point));
        }
        let a = Fr::from_bigint(&BigInt::from(123_456_789u64));
        let b = Fr::from_bigint(&BigInt::from(-987_654_321i64));
        let (p, q) = (g1[0], g2[0]);
        // e(aP, bQ) · e(-abP, Q) = 1, and not with a wrong factor.
        assert!(pairing_check(&[(p * a, q * b), (-(p * (a * b)), q)]));
        assert!(!pairing_check(&[
            (p * a, q * b),
            (-(p * (a * b + Fr::one())), q)
        ]));
        // e(P1 + P2, Q) = e(P1, Q) · e(P2, Q).
        assert!(pairing_check(&[
            (g1[1] + g1[2], q),
            (-g1[1], q),
            (-g1[2], q)
        ]));
        assert!(!pairing_check(&[(g1[1], q)]));
        assert!(pairing_check(&[]));
        assert!(pairing_check(&[(G1::identity(), q), (p, G2::identity())]));
    }

    #[test]
    fn group_laws_on_real_points() {
        let Some((g1, g2)) = points() else {
            return;
        };
        let two = Fr::from_bigint(&BigInt::from(2));
        assert_eq!(g1[0] + g1[0], g1[0] * two);
        assert_eq!(g2[0] + g2[0], g2[0] * two);
        assert!((g1[0] + -g1[0]).is_identity());
        assert!((g2[0] + -g2[0]).is_identity());
        assert_eq!(g1[0] * Fr::zero(), G1::identity());
        assert_eq!(g1[1] + g1[2], g1[2] + g1[1]);
    }

    #[test]
    fn point_byte_rules() {
        // The identity encodes as the infinity flag and zeros (ZCash serialization).
        let mut infinity = [0u8; 96];
        infinity[0] = 0x40;
        assert_eq!(G1::identity().to_bytes(), infinity);
        assert_eq!(G1::try_from_bytes(&infinity), Ok(G1::identity()));
        assert_eq!(
            hex::encode(&G1::generator().to_bytes()[..16]),
            "17f1d3a73197d7942695638c4fa9ac0f"
        );
        assert_eq!(
            G1::try_from_bytes(&[0; 96]),
            Err(CryptoError::InvalidPoint {
                what: "bls12_381_g1"
            })
        );
        assert_eq!(
            G1::try_from_bytes(&[0; 48]),
            Err(CryptoError::WrongLength {
                what: "bls12_381_g1",
                expected: 96,
                found: 48
            })
        );
        assert!(G2::try_from_bytes(&[0; 192]).is_err());
        assert!(G2::try_from_bytes(&[0; 96]).is_err());
        // A compressed encoding is not accepted where the uncompressed one is required.
        let mut compressed_flag = G1::generator().to_bytes();
        compressed_flag[0] |= 0x80;
        assert!(G1::try_from_bytes(&compressed_flag).is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(0u8.., 0..200)) {
            if let Ok(fr) = Fr::try_from_bytes(&bytes) {
                proptest::prop_assert_eq!(Fr::try_from_bytes(&fr.to_bytes()), Ok(fr));
            }
            let _ = G1::try_from_bytes(&bytes);
            let _ = G2::try_from_bytes(&bytes);
        }

        #[test]
        fn fr_from_bigint_matches_modular_arithmetic(a in proptest::num::i128::ANY, b in proptest::num::i128::ANY) {
            let (x, y) = (BigInt::from(a), BigInt::from(b));
            proptest::prop_assert_eq!(Fr::from_bigint(&x) * Fr::from_bigint(&y), Fr::from_bigint(&(&x * &y)));
            proptest::prop_assert_eq!(Fr::from_bigint(&x) + Fr::from_bigint(&y), Fr::from_bigint(&(&x + &y)));
        }
    }
}
