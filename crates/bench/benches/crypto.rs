//! Signature verification (`CHECK_SIGNATURE`) per scheme, Kestrel against the library Octez
//! verifies with (blst for BLS, libsecp256k1 for secp256k1) or the library Kestrel wraps
//! (ed25519-dalek, to show the wrapper's cost). Each side starts from values already read and
//! checked, as the interpreter does; the message is a 32-byte PACKed value.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ed25519_dalek::{Signer, Verifier};
use kestrel_crypto::hash::blake2b_256;
use kestrel_crypto::keys::BLS_SIGNATURE_DST;
use kestrel_crypto::{PublicKey, Signature, SignatureScheme};
use std::hint::black_box;

const MESSAGE: &[u8] = b"\x05\x01\x00\x00\x00\x1bkestrel benchmark message..";

fn verify_ed25519(c: &mut Criterion) {
    let secret = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let digest = blake2b_256(MESSAGE);
    let peer_signature = secret.sign(&digest);
    let peer_key = secret.verifying_key();
    let key = PublicKey::try_new(SignatureScheme::Ed25519, peer_key.as_bytes()).unwrap();
    let signature = Signature::try_from_bytes(&peer_signature.to_bytes()).unwrap();
    assert!(key.verify(&signature, MESSAGE));
    let mut group = c.benchmark_group("crypto/verify_ed25519");
    group.throughput(Throughput::Elements(1));
    group.bench_function("kestrel", |b| {
        b.iter(|| key.verify(black_box(&signature), black_box(MESSAGE)))
    });
    group.bench_function("ed25519-dalek", |b| {
        b.iter(|| {
            let digest = blake2b_256(black_box(MESSAGE));
            peer_key.verify(&digest, black_box(&peer_signature)).is_ok()
        })
    });
    group.finish();
}

fn verify_secp256k1(c: &mut Criterion) {
    let secret = secp256k1::SecretKey::from_secret_bytes([7; 32]).unwrap();
    let peer_key = secp256k1::PublicKey::from_secret_key(&secret);
    let peer_signature = secp256k1::ecdsa::sign(
        secp256k1::Message::from_digest(blake2b_256(MESSAGE)),
        &secret,
    );
    let key = PublicKey::try_new(SignatureScheme::Secp256k1, &peer_key.serialize()).unwrap();
    let signature = Signature::try_from_bytes(&peer_signature.serialize_compact()).unwrap();
    assert!(key.verify(&signature, MESSAGE));
    let mut group = c.benchmark_group("crypto/verify_secp256k1");
    group.throughput(Throughput::Elements(1));
    group.bench_function("kestrel", |b| {
        b.iter(|| key.verify(black_box(&signature), black_box(MESSAGE)))
    });
    group.bench_function("libsecp256k1", |b| {
        b.iter(|| {
            let digest = secp256k1::Message::from_digest(blake2b_256(black_box(MESSAGE)));
            secp256k1::ecdsa::verify(black_box(&peer_signature), digest, &peer_key).is_ok()
        })
    });
    group.finish();
}

fn verify_bls(c: &mut Criterion) {
    let secret = blst::min_pk::SecretKey::key_gen(&[7; 32], &[]).unwrap();
    let peer_key = secret.sk_to_pk();
    let key_bytes = peer_key.compress();
    let peer_signature = secret.sign(MESSAGE, BLS_SIGNATURE_DST, &key_bytes);
    let key = PublicKey::try_new(SignatureScheme::Bls, &key_bytes).unwrap();
    let signature = Signature::try_from_bytes(&peer_signature.compress()).unwrap();
    assert!(key.verify(&signature, MESSAGE));
    let mut group = c.benchmark_group("crypto/verify_bls");
    group.throughput(Throughput::Elements(1));
    group.bench_function("kestrel", |b| {
        b.iter(|| key.verify(black_box(&signature), black_box(MESSAGE)))
    });
    group.bench_function("blst", |b| {
        b.iter(|| {
            black_box(&peer_signature).verify(
                false,
                black_box(MESSAGE),
                BLS_SIGNATURE_DST,
                &key_bytes,
                &peer_key,
                false,
            ) == blst::BLST_ERROR::BLST_SUCCESS
        })
    });
    group.finish();
}

criterion_group!(benches, verify_ed25519, verify_secp256k1, verify_bls);
criterion_main!(benches);
