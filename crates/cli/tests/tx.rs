//! `kestrel tx decode` and `kestrel tx check` run as a user would run them.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use kestrel_txview::{InstructionSpec, MessageHeader, Transaction, TransactionVersion};

mod support;

/// Runs `kestrel` with `arguments` and an empty stdin: (exit code, stdout, stderr).
fn kestrel(arguments: &[&str]) -> (i32, String, String) {
    support::run_kestrel(arguments, "")
}

/// A signed legacy transfer-shaped transaction, and the same with the fee payer as program.
fn transactions() -> (Vec<u8>, Vec<u8>) {
    let signing_key = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let payer = signing_key.verifying_key().to_bytes();
    let mut transaction = Transaction::new(
        TransactionVersion::Legacy,
        MessageHeader {
            num_required_signatures: 1,
            num_readonly_signed_accounts: 0,
            num_readonly_unsigned_accounts: 1,
        },
        vec![payer, [5; 32], [0; 32]],
        [9; 32],
        vec![InstructionSpec {
            program_id_index: 2,
            accounts: vec![0, 1],
            data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        }],
    );
    transaction.sign(&[signing_key]);
    let good = transaction.serialize();
    transaction.instructions[0].program_id_index = 0;
    (good, transaction.serialize())
}

#[test]
fn check_prints_one_verdict_per_line_and_a_total() {
    let (good, fee_payer_program) = transactions();
    let directory = std::env::temp_dir().join(format!("kestrel-tx-check-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("transactions.hex");
    let lines = [
        hex::encode(&good),
        "# a comment".to_string(),
        String::new(),
        hex::encode(&good[..good.len() - 1]),
        hex::encode(&fee_payer_program),
        "zz!".to_string(),
        hex::encode([&good[..], &[0]].concat()),
    ];
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (code, stdout, _) = kestrel(&["tx", "check", path.to_str().unwrap()]);
    assert_eq!(
        stdout,
        "1: ok\n\
         2: skipped\n\
         3: skipped\n\
         4: error: truncated at instructions[0].data\n\
         5: error: program_id_is_fee_payer at instructions[0].program_id_index\n\
         6: error: invalid_encoding at line (neither hex, base58 nor base64)\n\
         7: error: trailing_bytes at trailing_bytes\n\
         1 accepted, 4 rejected\n"
    );
    assert_eq!(code, 1);
    std::fs::write(&path, hex::encode(&good)).unwrap();
    let (code, stdout, _) =
        kestrel(&["tx", "check", "--verify-signatures", path.to_str().unwrap()]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "1: ok\n1 accepted, 0 rejected\n")
    );
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn check_reads_0x_base58_and_standard_input_and_prints_json() {
    let (good, _) = transactions();
    let input = format!(
        "0x{}\n\n{}\n",
        hex::encode(&good),
        bs58::encode(&good).into_string()
    );
    let (code, stdout, stderr) = support::run_kestrel(&["tx", "check", "-"], &input);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "1: ok\n2: skipped\n3: ok\n2 accepted, 0 rejected\n");
    let (code, stdout, _) = support::run_kestrel(&["tx", "check", "-", "--json"], &input);
    assert_eq!(code, 0);
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["accepted"], 2);
    assert_eq!(value["lines"][1]["verdict"], "skipped");
    assert_eq!(value["lines"][2]["line"], 3);
}

#[test]
fn decode_reads_base58_and_standard_input() {
    let (good, _) = transactions();
    let encoded = bs58::encode(&good).into_string();
    let (code, stdout, stderr) = kestrel(&["tx", "decode", &encoded]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("sanitize:         ok"), "{stdout}");
    let (code, stdout, stderr) = support::run_kestrel(&["tx", "decode", "-"], &hex::encode(&good));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("version:          legacy"), "{stdout}");
}

#[test]
fn decode_shows_a_transaction_in_hex_base64_and_json() {
    let (good, _) = transactions();
    let (code, stdout, stderr) = kestrel(&["tx", "decode", &hex::encode(&good)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("version:          legacy"), "{stdout}");
    assert!(stdout.contains("sanitize:         ok"), "{stdout}");
    assert!(stdout.contains("signatures:       ok"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>()
                == ["2", "11111111111111111111111111111111", "readonly"]),
        "{stdout}"
    );

    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&good);
    let (code, stdout, _) = kestrel(&["tx", "decode", &encoded, "--json"]);
    assert_eq!(code, 0);
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["version"], "legacy");
    assert_eq!(value["size_bytes"], good.len());
    assert_eq!(
        value["instructions"][0]["accounts"],
        serde_json::json!([0, 1])
    );
    assert_eq!(value["account_keys"][0]["role"], "signer,writable");
    assert_eq!(value["signatures_verify"], "ok");

    let (code, _, stderr) = kestrel(&["tx", "decode", &hex::encode(&good[..10])]);
    assert_eq!(code, 1);
    assert!(stderr.contains("truncated"), "{stderr}");
}
