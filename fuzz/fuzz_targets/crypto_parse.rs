//! Fuzzes every base58check and binary parser of `kestrel-crypto`: none may panic, and every
//! value read must write back to a form that reads back to the same value.

#![no_main]

use kestrel_crypto::bls::{Fr, G1, G2};
use kestrel_crypto::{
    Address, BlockHash, ChainId, ContractHash, Destination, PublicKey, PublicKeyHash, Signature,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Binary forms.
    if let Ok(value) = PublicKeyHash::try_from_bytes(data) {
        assert_eq!(PublicKeyHash::try_from_bytes(&value.to_bytes()), Ok(value));
        assert_eq!(
            PublicKeyHash::from_b58check(&value.to_b58check()),
            Ok(value)
        );
    }
    if let Ok(value) = PublicKey::try_from_bytes(data) {
        assert_eq!(value.to_bytes(), data);
        assert_eq!(
            PublicKey::from_b58check(&value.to_b58check()).as_ref(),
            Ok(&value)
        );
    }
    if let Ok(value) = Signature::try_from_bytes(data) {
        assert_eq!(value.as_bytes(), data);
        assert_eq!(
            Signature::from_b58check(&value.to_b58check()).as_ref(),
            Ok(&value)
        );
    }
    if let Ok(value) = Destination::try_from_bytes(data) {
        assert_eq!(value.to_bytes(), data);
        assert_eq!(Destination::from_b58check(&value.to_b58check()), Ok(value));
    }
    if let Ok(value) = Address::try_from_bytes(data) {
        assert_eq!(
            Address::try_from_bytes(&value.to_bytes()).as_ref(),
            Ok(&value)
        );
        assert_eq!(
            Address::from_b58check(&value.to_b58check()).as_ref(),
            Ok(&value)
        );
    }
    if let Ok(value) = ChainId::try_from_bytes(data) {
        assert_eq!(ChainId::from_b58check(&value.to_b58check()), Ok(value));
    }
    if let Ok(value) = Fr::try_from_bytes(data) {
        assert_eq!(Fr::try_from_bytes(&value.to_bytes()), Ok(value));
    }
    if let Ok(value) = G1::try_from_bytes(data) {
        assert_eq!(value.to_bytes().as_slice(), data);
    }
    if let Ok(value) = G2::try_from_bytes(data) {
        assert_eq!(value.to_bytes().as_slice(), data);
    }
    // Text forms.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(value) = PublicKeyHash::from_b58check(text) {
            assert_eq!(value.to_b58check(), text);
        }
        if let Ok(value) = PublicKey::from_b58check(text) {
            assert_eq!(value.to_b58check(), text);
        }
        if let Ok(value) = Signature::from_b58check(text) {
            assert_eq!(value.to_b58check(), text);
        }
        if let Ok(value) = Address::from_b58check(text) {
            // `KT1...%` names the default entrypoint and prints without the `%`.
            assert_eq!(
                Address::from_b58check(&value.to_b58check()).as_ref(),
                Ok(&value)
            );
        }
        let _ = ContractHash::from_b58check(text);
        let _ = BlockHash::from_b58check(text);
    }
});
