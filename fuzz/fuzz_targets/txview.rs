//! Fuzzes the transaction views: any bytes must parse or fail with a typed error, never panic or
//! read out of bounds; whatever parses must sanitize or fail cleanly, iterate fully, resolve, and
//! serialize back to exactly the bytes it came from; the prefix constructor must agree with the
//! exact one on the consumed length.

#![no_main]

use kestrel_txview::{
    LoadedAddresses, ResolvedTransactionView, SanitizeConfig, SanitizedTransactionView,
    Transaction, UnsanitizedTransactionView,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let prefix = UnsanitizedTransactionView::try_new_unsanitized_from_prefix(bytes);
    let exact = UnsanitizedTransactionView::try_new_unsanitized(bytes);
    if let Ok((view, length)) = &prefix {
        assert_eq!(view.data(), &bytes[..*length]);
        assert_eq!(exact.is_ok(), *length == bytes.len());
    }
    let Ok(view) = exact else {
        assert!(
            SanitizedTransactionView::try_new_sanitized(bytes, &SanitizeConfig::MAINNET).is_err()
        );
        return;
    };
    let mut total = 0usize;
    for instruction in view.instructions_iter() {
        total += instruction.accounts.len()
            + instruction.data.len()
            + usize::from(instruction.program_id_index);
    }
    for lookup in view.address_table_lookup_iter() {
        total += lookup.writable_indexes.len()
            + lookup.readonly_indexes.len()
            + usize::from(lookup.account_key[0]);
    }
    if let Some(config) = view.transaction_config() {
        // Values are arbitrary: hand them to black_box rather than summing them.
        std::hint::black_box((
            config.priority_fee_lamports(),
            config.compute_unit_limit(),
            config.loaded_accounts_data_size_limit(),
            config.requested_heap_size(),
        ));
    }
    total += view.signatures().len() + view.static_account_keys().len() + view.message_data().len();
    std::hint::black_box(total);
    assert_eq!(Transaction::from_view(&view).serialize(), bytes);
    let one_call = SanitizedTransactionView::try_new_sanitized(bytes, &SanitizeConfig::MAINNET);
    match view.sanitize(&SanitizeConfig::MAINNET) {
        Ok(view) => {
            assert!(one_call.is_ok());
            let writable = vec![[7u8; 32]; usize::from(view.total_writable_lookup_accounts())];
            let readonly = vec![[8u8; 32]; usize::from(view.total_readonly_lookup_accounts())];
            let loaded = LoadedAddresses {
                writable: &writable,
                readonly: &readonly,
            };
            let resolved = ResolvedTransactionView::try_new(view, Some(loaded), |key| key[0] == 0)
                .expect("matching loaded addresses resolve");
            for index in 0..=256 {
                let _ = resolved.account_role(index);
            }
            assert_eq!(resolved.account_keys().count(), resolved.num_accounts());
        }
        Err(error) => assert_eq!(one_call.err().map(|e| e.kind()), Some(error.kind())),
    }
});
