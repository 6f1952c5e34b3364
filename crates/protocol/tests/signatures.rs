//! Signature checks of operations built and signed here with known secret keys (tz1 bootstrap1,
//! fixed tz2/tz3/tz4/tz5 keys): each verifies, and a mutated byte (content or signature) is refused;
//! tz4 reveals need a valid proof of possession; a set of operations is checked with its ed25519
//! signatures batched. Also Octez's tz4 reveal vector, whose proof of possession is real.

use kestrel_crypto::base58::{self, Prefix};
use kestrel_crypto::hash::blake2b_256;
use kestrel_crypto::{ChainId, PublicKey, Signature, SignatureScheme};
use kestrel_protocol::{
    check_all, Contents, ManagerKind, Operation, SignatureError, SignedOperation,
};

/// `edsk…` (54): ed25519 secret key seeds (Octez `base58.ml`, `ed25519_seed`).
const ED25519_SEED: Prefix = Prefix {
    bytes: &[13, 15, 58, 7],
    payload_size: 32,
};

/// bootstrap1's secret key (../shared/specs/tezos-node.md, section 1).
const BOOTSTRAP1_SECRET: &str = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
const BOOTSTRAP1_PUBLIC: &str = "edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav";
const BRANCH: &str = "BKpbfCvh777DQHnXjU2sqHvVUNZ7dBAdqEfKkdw8EGSkD9LSYXb";

fn chain_id() -> ChainId {
    ChainId::from_b58check("NetXdQprcVkpaWU").expect("mainnet chain id")
}

/// A key that signs the way Octez does for its scheme.
enum Signer {
    Ed25519(ed25519_dalek::SigningKey),
    Secp256k1(secp256k1::SecretKey),
    P256(p256::ecdsa::SigningKey),
    Bls(blst::min_pk::SecretKey),
    MlDsa44(Box<ml_dsa::KeyPair<ml_dsa::MlDsa44>>),
}

impl Signer {
    fn bootstrap1() -> Self {
        let seed = base58::decode_check(ED25519_SEED, BOOTSTRAP1_SECRET).expect("edsk");
        let seed: [u8; 32] = seed.try_into().expect("32-byte seed");
        Signer::Ed25519(ed25519_dalek::SigningKey::from_bytes(&seed))
    }

    fn of_scheme(scheme: SignatureScheme, seed: u8) -> Self {
        let secret = [seed; 32];
        match scheme {
            SignatureScheme::Ed25519 => {
                Signer::Ed25519(ed25519_dalek::SigningKey::from_bytes(&secret))
            }
            SignatureScheme::Secp256k1 => {
                Signer::Secp256k1(secp256k1::SecretKey::from_secret_bytes(secret).expect("scalar"))
            }
            SignatureScheme::P256 => {
                Signer::P256(p256::ecdsa::SigningKey::from_bytes(&secret.into()).expect("scalar"))
            }
            SignatureScheme::Bls => {
                Signer::Bls(blst::min_pk::SecretKey::key_gen(&secret, &[]).expect("ikm"))
            }
            SignatureScheme::MlDsa44 => {
                use ml_dsa::KeyGen;
                Signer::MlDsa44(Box::new(ml_dsa::MlDsa44::key_gen_internal(&secret.into())))
            }
        }
    }

    fn public_key(&self) -> PublicKey {
        let (scheme, bytes): (SignatureScheme, Vec<u8>) = match self {
            Signer::Ed25519(key) => (
                SignatureScheme::Ed25519,
                key.verifying_key().to_bytes().to_vec(),
            ),
            Signer::Secp256k1(key) => (
                SignatureScheme::Secp256k1,
                secp256k1::PublicKey::from_secret_key(key)
                    .serialize()
                    .to_vec(),
            ),
            Signer::P256(key) => (
                SignatureScheme::P256,
                key.verifying_key()
                    .to_encoded_point(true)
                    .as_bytes()
                    .to_vec(),
            ),
            Signer::Bls(key) => (SignatureScheme::Bls, key.sk_to_pk().compress().to_vec()),
            Signer::MlDsa44(pair) => (
                SignatureScheme::MlDsa44,
                pair.verifying_key().encode().to_vec(),
            ),
        };
        PublicKey::try_new(scheme, &bytes).expect("valid key")
    }

    /// Octez's `Signature.V3.sign` of `message`.
    fn sign(&self, message: &[u8]) -> Signature {
        match self {
            Signer::Ed25519(key) => {
                use ed25519_dalek::Signer as _;
                let signature = key.sign(&blake2b_256(message));
                Signature::try_new(Some(SignatureScheme::Ed25519), &signature.to_bytes())
            }
            Signer::Secp256k1(key) => {
                let digest = secp256k1::Message::from_digest(blake2b_256(message));
                let signature = secp256k1::ecdsa::sign(digest, key);
                Signature::try_new(
                    Some(SignatureScheme::Secp256k1),
                    &signature.serialize_compact(),
                )
            }
            Signer::P256(key) => {
                use p256::ecdsa::signature::hazmat::PrehashSigner;
                let signature: p256::ecdsa::Signature =
                    key.sign_prehash(&blake2b_256(message)).expect("signs");
                Signature::try_new(Some(SignatureScheme::P256), &signature.to_bytes())
            }
            Signer::Bls(key) => {
                let signature = key.sign(
                    message,
                    kestrel_crypto::keys::BLS_POP_SCHEME_SIGNATURE_DST,
                    &[],
                );
                Signature::try_new(Some(SignatureScheme::Bls), &signature.compress())
            }
            Signer::MlDsa44(pair) => {
                // Octez signs hedged (fresh randomness); verification accepts both forms.
                let signature = pair
                    .signing_key()
                    .sign_deterministic(&blake2b_256(message), &[])
                    .expect("signs");
                Signature::try_new(Some(SignatureScheme::MlDsa44), &signature.encode())
            }
        }
        .expect("valid signature")
    }

    /// The BLS proof of possession of the key.
    fn proof_of_possession(&self) -> Signature {
        let Signer::Bls(key) = self else {
            panic!("proofs of possession are BLS")
        };
        let public = key.sk_to_pk().compress();
        let proof = key.sign(
            &public,
            kestrel_crypto::keys::BLS_PROOF_OF_POSSESSION_DST,
            &[],
        );
        Signature::try_new(Some(SignatureScheme::Bls), &proof.compress()).expect("valid proof")
    }
}

/// A transfer of `amount` mutez from `signer`'s account, unsigned.
fn transfer(signer: &Signer, amount: u64, counter: u32) -> Operation<'static> {
    Operation::from_json_str(&format!(
        r#"{{"branch":"{BRANCH}","contents":[{{"kind":"transaction","source":"{}",
        "fee":"1000","counter":"{counter}","gas_limit":"3040","storage_limit":"257",
        "amount":"{amount}","destination":"tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN"}}]}}"#,
        signer.public_key().hash()
    ))
    .expect("valid transfer")
}

/// Signs `operation` with `signer` and returns the signed bytes.
fn sign(mut operation: Operation<'static>, signer: &Signer) -> Vec<u8> {
    operation.signature = Some(signer.sign(&operation.signing_message()));
    operation.encode()
}

/// `check(signed bytes, key) == expected`, and every mutated byte of the unsigned part or the
/// signature is refused (or no longer decodes).
fn check_signed(bytes: &[u8], key: &PublicKey) {
    let signed = SignedOperation::decode(bytes).expect("decodes");
    assert_eq!(signed.check_signature(key, chain_id()), Ok(()));
    assert_eq!(signed.operation.encode(), bytes, "re-encodes");
    for index in [
        40,
        bytes.len() - 1,
        bytes.len() - 40,
        signed.unsigned_size_bytes - 1,
    ] {
        let mut mutated = bytes.to_vec();
        mutated[index] ^= 0x01;
        if let Ok(signed) = SignedOperation::decode(&mutated) {
            assert!(
                signed.check_signature(key, chain_id()).is_err(),
                "byte {index} mutated still verifies"
            );
        }
    }
}

#[test]
fn bootstrap1_transfer_verifies() {
    let signer = Signer::bootstrap1();
    assert_eq!(signer.public_key().to_b58check(), BOOTSTRAP1_PUBLIC);
    let bytes = sign(transfer(&signer, 1_000_000, 1), &signer);
    check_signed(&bytes, &signer.public_key());
    // Another key does not verify it.
    let other = Signer::of_scheme(SignatureScheme::Ed25519, 7).public_key();
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    assert_eq!(
        signed.check_signature(&other, chain_id()),
        Err(SignatureError::Invalid)
    );
    // The hash is blake2b-256 of the signed bytes.
    assert_eq!(signed.hash().as_bytes(), &blake2b_256(&bytes));
    assert!(signed.hash().to_b58check().starts_with('o'));
}

#[test]
fn each_scheme_verifies_and_refuses_mutations() {
    for scheme in SignatureScheme::ALL {
        let signer = Signer::of_scheme(scheme, 3);
        let bytes = sign(transfer(&signer, 5, 9), &signer);
        if matches!(scheme, SignatureScheme::Bls | SignatureScheme::MlDsa44) {
            // The tagged form: `ff`, the scheme's tag, all but the last 64 bytes, the suffix.
            let prefix_at = bytes.len() - scheme.signature_size_bytes() - 2;
            assert_eq!(&bytes[prefix_at..prefix_at + 2], &[0xff, scheme.tag()]);
        }
        check_signed(&bytes, &signer.public_key());
    }
}

#[test]
fn unsigned_operation_is_missing_its_signature() {
    let signer = Signer::bootstrap1();
    let bytes = transfer(&signer, 1, 1).encode();
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    assert_eq!(signed.operation.signature, None);
    assert_eq!(
        signed.check_signature(&signer.public_key(), chain_id()),
        Err(SignatureError::Missing)
    );
}

/// A tz4 reveal with `proof`, signed by the key.
fn bls_reveal(signer: &Signer, proof: Option<&Signature>) -> Vec<u8> {
    let key = signer.public_key();
    let proof = proof.map_or(String::new(), |proof| format!(r#","proof":"{proof}""#));
    let operation = Operation::from_json_str(&format!(
        r#"{{"branch":"{BRANCH}","contents":[{{"kind":"reveal","source":"{}","fee":"734",
        "counter":"11","gas_limit":"3252","storage_limit":"0","public_key":"{key}"{proof}}}]}}"#,
        key.hash()
    ))
    .expect("valid reveal");
    sign(operation, signer)
}

#[test]
fn bls_reveal_needs_a_valid_proof_of_possession() {
    let signer = Signer::of_scheme(SignatureScheme::Bls, 11);
    let proof = signer.proof_of_possession();
    let bytes = bls_reveal(&signer, Some(&proof));
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    assert_eq!(signed.check_proofs_of_possession(), Ok(()));
    check_signed(&bytes, &signer.public_key());

    let missing = bls_reveal(&signer, None);
    let signed = SignedOperation::decode(&missing).expect("decodes");
    assert_eq!(
        signed.check_proofs_of_possession(),
        Err(SignatureError::MissingBlsProof { index: 0 })
    );

    // Another key's proof, and the operation signature used as a proof, are refused.
    let other = Signer::of_scheme(SignatureScheme::Bls, 12).proof_of_possession();
    let wrong = bls_reveal(&signer, Some(&other));
    let signed = SignedOperation::decode(&wrong).expect("decodes");
    assert_eq!(
        signed.check_proofs_of_possession(),
        Err(SignatureError::IncorrectBlsProof { index: 0 })
    );
    assert_eq!(
        SignatureError::IncorrectBlsProof { index: 0 }.octez_id(),
        "validate.operation.incorrect_bls_proof"
    );
}

#[test]
fn octez_signed_tz4_reveal_vector_verifies() {
    let Some(path) =
        kestrel_testdata::require("octez-protocol/encoding/operation.out", "tz4 reveal vector")
    else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("readable");
    let hex_text = text
        .lines()
        .find_map(|line| line.strip_prefix("operation-reveal-with-proof: "))
        .expect("the reveal-with-proof vector");
    let bytes = hex::decode(hex_text.trim()).expect("hex");
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    let Contents::Manager(manager) = &signed.operation.contents[0] else {
        panic!("a manager operation")
    };
    let ManagerKind::Reveal(reveal) = &manager.operation else {
        panic!("a reveal")
    };
    assert_eq!(reveal.public_key.hash(), manager.header.source);
    assert_eq!(signed.check_proofs_of_possession(), Ok(()));
    // The operation's own signature does not verify over these bytes under any BLS scheme (the
    // sample's fields were edited after signing), so only the proof is an oracle here.
    let Some(proof) = &reveal.proof else {
        panic!("the vector carries a proof")
    };
    let mut mutated = proof.0 .0.as_bytes().to_vec();
    mutated[95] ^= 0x01;
    if let Ok(mutated) = Signature::try_new(Some(SignatureScheme::Bls), &mutated) {
        assert!(!reveal.public_key.verify_proof_of_possession(&mutated));
    }
}

#[test]
fn batch_names_the_failing_operation() {
    let signers: Vec<Signer> = (20..26)
        .map(|seed| Signer::of_scheme(SignatureScheme::Ed25519, seed))
        .chain([Signer::of_scheme(SignatureScheme::Secp256k1, 30)])
        .collect();
    let mut all_bytes: Vec<Vec<u8>> = signers
        .iter()
        .enumerate()
        .map(|(index, signer)| sign(transfer(signer, 100 + index as u64, 1), signer))
        .collect();
    let keys: Vec<PublicKey> = signers.iter().map(Signer::public_key).collect();
    let check = |all_bytes: &[Vec<u8>]| {
        let signed: Vec<SignedOperation<'_>> = all_bytes
            .iter()
            .map(|bytes| SignedOperation::decode(bytes).expect("decodes"))
            .collect();
        let pairs: Vec<(&SignedOperation<'_>, &PublicKey)> = signed.iter().zip(&keys).collect();
        check_all(&pairs, chain_id())
    };
    assert_eq!(check(&all_bytes), Ok(()));
    // A mutated signature in the middle of the ed25519 batch is named.
    let last = all_bytes[3].len() - 1;
    all_bytes[3][last] ^= 0x80;
    assert_eq!(check(&all_bytes), Err((3, SignatureError::Invalid)));
}

/// A lone attestation at `slot`, unsigned.
fn attestation(slot: u16) -> Operation<'static> {
    Operation::from_json_str(&format!(
        r#"{{"branch":"{BRANCH}","contents":[{{"kind":"attestation","slot":{slot},"level":1331,
        "round":0,"block_payload_hash":"vh1g87ZG6scSYxKhspAUzprQVuLAyoa5qMBKcUfjgnQGnFb3dJcG"}}]}}"#
    ))
    .expect("valid attestation")
}

#[test]
fn attestations_sign_with_the_chain_watermark_and_tz4_in_bls_mode() {
    let mut watermarked = vec![kestrel_protocol::signature::ATTESTATION_WATERMARK];
    watermarked.extend_from_slice(chain_id().as_bytes());
    // An ed25519 attester signs `0x13 ‖ chain id ‖ unsigned bytes`.
    let signer = Signer::of_scheme(SignatureScheme::Ed25519, 40);
    let mut operation = attestation(7);
    let mut message = watermarked.clone();
    message.extend_from_slice(&operation.encode_unsigned());
    operation.signature = Some(signer.sign(&message));
    let bytes = operation.encode();
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    assert_eq!(
        signed.check_signature(&signer.public_key(), chain_id()),
        Ok(())
    );
    let other_chain = ChainId::from_b58check("NetXnHfVqm9iesp").expect("chain id");
    assert_eq!(
        signed.check_signature(&signer.public_key(), other_chain),
        Err(SignatureError::Invalid)
    );

    // A tz4 attester signs the BLS-mode bytes, without the slot: the same signature holds for
    // any slot, and a signature of the ordinary bytes does not verify.
    let signer = Signer::of_scheme(SignatureScheme::Bls, 41);
    let mut message = watermarked.clone();
    message.extend_from_slice(&attestation(7).encode_bls_mode_unsigned());
    let signature = signer.sign(&message);
    for slot in [7, 8] {
        let mut operation = attestation(slot);
        operation.signature = Some(signature.clone());
        let bytes = operation.encode();
        let signed = SignedOperation::decode(&bytes).expect("decodes");
        assert_eq!(
            signed.check_signature(&signer.public_key(), chain_id()),
            Ok(())
        );
    }
    let mut operation = attestation(7);
    let mut ordinary = watermarked;
    ordinary.extend_from_slice(&operation.encode_unsigned());
    operation.signature = Some(signer.sign(&ordinary));
    let bytes = operation.encode();
    let signed = SignedOperation::decode(&bytes).expect("decodes");
    assert_eq!(
        signed.check_signature(&signer.public_key(), chain_id()),
        Err(SignatureError::Invalid)
    );
}
