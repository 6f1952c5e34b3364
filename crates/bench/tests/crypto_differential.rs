//! Differential tests of `kestrel-crypto` signature verification against the C libraries Octez
//! verifies with: blst (BLS min-pk, message augmentation) and libsecp256k1 (ECDSA, low-s only).
//! Signatures are made by the peer and must verify in Kestrel exactly when they verify in the
//! peer.

use kestrel_crypto::hash::blake2b_256;
use kestrel_crypto::keys::BLS_SIGNATURE_DST;
use kestrel_crypto::{PublicKey, Signature, SignatureScheme};

/// Messages of several lengths, including the empty one and one longer than a hash block.
fn messages() -> Vec<Vec<u8>> {
    (0..12u8)
        .map(|index| {
            (0..usize::from(index) * 23)
                .map(|i| (i as u8) ^ index)
                .collect()
        })
        .collect()
}

#[test]
fn blst_signatures_verify_exactly_when_blst_accepts_them() {
    for (index, message) in messages().iter().enumerate() {
        let ikm = [index as u8 + 1; 32];
        let secret = blst::min_pk::SecretKey::key_gen(&ikm, &[]).unwrap();
        let public = secret.sk_to_pk();
        let public_bytes = public.compress();
        let signature = secret.sign(message, BLS_SIGNATURE_DST, &public_bytes);
        assert_eq!(
            signature.verify(
                true,
                message,
                BLS_SIGNATURE_DST,
                &public_bytes,
                &public,
                true
            ),
            blst::BLST_ERROR::BLST_SUCCESS
        );
        let key = PublicKey::try_new(SignatureScheme::Bls, &public_bytes).unwrap();
        let ours = Signature::try_new(Some(SignatureScheme::Bls), &signature.compress()).unwrap();
        assert!(key.verify(&ours, message), "message {index}");
        // A different message or key does not verify, in either implementation.
        let mut other = message.clone();
        other.push(0);
        assert!(!key.verify(&ours, &other));
        assert_ne!(
            signature.verify(
                true,
                &other,
                BLS_SIGNATURE_DST,
                &public_bytes,
                &public,
                true
            ),
            blst::BLST_ERROR::BLST_SUCCESS
        );
        let other_key = blst::min_pk::SecretKey::key_gen(&[index as u8 + 100; 32], &[])
            .unwrap()
            .sk_to_pk()
            .compress();
        let other_key = PublicKey::try_new(SignatureScheme::Bls, &other_key).unwrap();
        assert!(!other_key.verify(&ours, message));
    }
}

#[test]
fn libsecp256k1_signatures_verify_exactly_when_libsecp256k1_accepts_them() {
    use k256::elliptic_curve::PrimeField;
    for (index, message) in messages().iter().enumerate() {
        let secret = secp256k1::SecretKey::from_secret_bytes([index as u8 + 1; 32]).unwrap();
        let public = secp256k1::PublicKey::from_secret_key(&secret);
        let digest = secp256k1::Message::from_digest(blake2b_256(message));
        let signature = secp256k1::ecdsa::sign(digest, &secret);
        let compact = signature.serialize_compact();
        let key = PublicKey::try_new(SignatureScheme::Secp256k1, &public.serialize()).unwrap();
        let ours = Signature::try_new(Some(SignatureScheme::Secp256k1), &compact).unwrap();
        assert!(secp256k1::ecdsa::verify(&signature, digest, &public).is_ok());
        assert!(key.verify(&ours, message), "message {index}");
        // The high-s twin (n - s) of the same signature is refused by both.
        let s = k256::Scalar::from_repr(k256::FieldBytes::from(
            <[u8; 32]>::try_from(&compact[32..]).unwrap(),
        ))
        .unwrap();
        let mut high = compact;
        high[32..].copy_from_slice(&(-s).to_bytes());
        let peer_high = secp256k1::ecdsa::Signature::from_compact(&high).unwrap();
        assert!(secp256k1::ecdsa::verify(&peer_high, digest, &public).is_err());
        let ours_high = Signature::try_new(Some(SignatureScheme::Secp256k1), &high).unwrap();
        assert!(!key.verify(&ours_high, message));
    }
}
