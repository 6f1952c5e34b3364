//! `kestrel solana pack` run as a user would run it: transactions in hex, base64 and base58 lines
//! or a binary length-prefixed stream, per-block results, rejections by reason.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use base64::Engine;
use kestrel_txview::{InstructionSpec, MessageHeader, Transaction, TransactionVersion};

mod support;

/// Signed transfers from distinct payers, each with a compute-unit price.
fn transfers(count: u8) -> Vec<Vec<u8>> {
    (0..count)
        .map(|index| {
            let payer = ed25519_dalek::SigningKey::from_bytes(&[index + 1; 32]);
            let mut price = vec![3];
            price.extend(1_000_000u64.to_le_bytes());
            let mut transaction = Transaction::new(
                TransactionVersion::Legacy,
                MessageHeader {
                    num_required_signatures: 1,
                    num_readonly_signed_accounts: 0,
                    num_readonly_unsigned_accounts: 2,
                },
                vec![
                    payer.verifying_key().to_bytes(),
                    [0x50 + index; 32],
                    kestrel_scheduler::program_id::COMPUTE_BUDGET,
                    [0; 32],
                ],
                [9; 32],
                vec![
                    InstructionSpec {
                        program_id_index: 2,
                        accounts: vec![],
                        data: price,
                    },
                    InstructionSpec {
                        program_id_index: 3,
                        accounts: vec![0, 1],
                        data: vec![2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
                    },
                ],
            );
            transaction.sign(&[payer]);
            transaction.serialize()
        })
        .collect()
}

#[test]
fn text_lines_in_three_encodings_with_a_duplicate_and_garbage() {
    let packets = transfers(3);
    let input = format!(
        "# three transfers, one twice, one line of garbage\n{}\n{}\n{}\n{}\nnot a transaction\n",
        hex::encode(&packets[0]),
        base64::engine::general_purpose::STANDARD.encode(&packets[1]),
        bs58::encode(&packets[2]).into_string(),
        hex::encode(&packets[0]),
    );
    let (code, stdout, stderr) =
        support::run_kestrel(&["solana", "pack", "-", "--workers", "2", "--json"], &input);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["packets"], 5);
    let total = &report["total"];
    assert_eq!(total["transactions"], 3);
    assert_eq!(total["rejected"]["duplicate_signature"], 1);
    assert_eq!(total["rejected"].as_object().unwrap().len(), 2);
    // Each pays 2,500 of its signature fee and 1 lamport per unit of its 3,000 + 3,000 default
    // units (two builtin instructions).
    assert_eq!(total["fees_lamports"], 3 * (2_500 + 6_000));
    assert_eq!(report["blocks"][0]["batches"], 1);
}

#[test]
fn a_binary_stream_and_the_human_report() {
    let mut stream = Vec::new();
    for packet in transfers(4) {
        stream.extend((packet.len() as u16).to_le_bytes());
        stream.extend(packet);
    }
    let path = std::env::temp_dir().join(format!("kestrel-pack-{}.bin", std::process::id()));
    std::fs::write(&path, &stream).unwrap();
    let (code, stdout, stderr) =
        support::run_kestrel(&["solana", "pack", path.to_str().unwrap(), "--binary"], "");
    std::fs::remove_file(&path).unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("slot     0:      4 transactions"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("4 packets, 1 blocks, 4 transactions scheduled, 0 rejected (0 evicted)\n"),
        "{stdout}"
    );
    stream.truncate(stream.len() - 1);
    let path = std::env::temp_dir().join(format!("kestrel-pack-cut-{}.bin", std::process::id()));
    std::fs::write(&path, &stream).unwrap();
    let (code, _, stderr) =
        support::run_kestrel(&["solana", "pack", path.to_str().unwrap(), "--binary"], "");
    std::fs::remove_file(&path).unwrap();
    assert_eq!(code, 1);
    assert!(
        stderr.contains("binary stream: packet 3 announces"),
        "{stderr}"
    );
}

#[test]
fn the_input_streams_in_windows_and_oversized_packets_keep_the_framing() {
    // Binary, detected: an oversized packet between transfers is rejected whole and the
    // packets after it still frame; one packet per block reads the input four windows deep.
    let packets = transfers(3);
    let mut stream = Vec::new();
    for packet in [&packets[0], &vec![7u8; 5_000], &packets[1], &packets[2]] {
        stream.extend((packet.len() as u16).to_le_bytes());
        stream.extend(packet);
    }
    let path = std::env::temp_dir().join(format!("kestrel-pack-big-{}.bin", std::process::id()));
    std::fs::write(&path, &stream).unwrap();
    let run = |per_block: &str| {
        let (code, stdout, stderr) = support::run_kestrel(
            &[
                "solana",
                "pack",
                path.to_str().unwrap(),
                "--packets-per-block",
                per_block,
                "--json",
            ],
            "",
        );
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()
    };
    let one_window = run("4096");
    let windows = run("1");
    std::fs::remove_file(&path).unwrap();
    for report in [&one_window, &windows] {
        assert_eq!(report["packets"], 4);
        assert_eq!(report["total"]["transactions"], 3);
        assert_eq!(report["total"]["rejected"]["packet_too_large"], 1);
    }
    assert_eq!(one_window["blocks"].as_array().unwrap().len(), 1);
    assert_eq!(windows["blocks"].as_array().unwrap().len(), 4);
    assert_eq!(
        one_window["total"]["fees_lamports"],
        windows["total"]["fees_lamports"]
    );

    // Text: a line longer than any encoded transaction is a too-large packet, not a read of
    // the line whole; the lines around it decode.
    let input = format!(
        "{}\n{}\n\n# done\n{}",
        hex::encode(&packets[0]),
        "ab".repeat(20_000),
        hex::encode(&packets[1]),
    );
    let (code, stdout, stderr) = support::run_kestrel(&["solana", "pack", "-", "--json"], &input);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["packets"], 3);
    assert_eq!(report["total"]["transactions"], 2);
    assert_eq!(report["total"]["rejected"]["packet_too_large"], 1);
}
