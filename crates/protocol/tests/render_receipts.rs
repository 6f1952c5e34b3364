//! The receipt renderer against octez-client's recorded mockup sessions
//! (`octez-protocol/receipts/*.out`, read in place): a receipt is built as the session's
//! operation had it, rendered, its hashes masked as the recording masks them, and compared with
//! the recorded "This sequence of operations was run:" block.

use kestrel_protocol::{render_failed_simulation, render_receipt, ContentsAndMetadata, Field};

/// The `index`-th (from 0) block of a recording that starts with `heading`, up to the blank line
/// (or the next client message) that ends it.
fn recorded_block(file: &str, heading: &str, index: usize) -> Option<String> {
    let path = kestrel_testdata::require(
        &format!("octez-protocol/receipts/{file}"),
        "mockup receipts",
    )?;
    let text = std::fs::read_to_string(path).expect("readable recording");
    let start = text
        .match_indices(heading)
        .nth(index)
        .expect("block in the recording")
        .0;
    let block = &text[start..];
    let end = block
        .find("\n\n")
        .or_else(|| block.find("\nFailed to fetch"))
        .map_or(block.len(), |end| end + 1);
    Some(block[..end].to_owned())
}

/// Replaces account and contract hashes with the recordings' masks.
fn mask(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(position) = rest.find(['t', 'K']) {
        out.push_str(&rest[..position]);
        let candidate = &rest[position..];
        let is_hash = candidate.len() >= 36
            && (candidate.starts_with("tz1") || candidate.starts_with("KT1"))
            && candidate[..36]
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric());
        if is_hash {
            out.push_str(if candidate.starts_with("KT1") {
                "[CONTRACT_HASH]"
            } else {
                "[PUBLIC_KEY_HASH]"
            });
            rest = &candidate[36..];
        } else {
            out.push_str(&candidate[..1]);
            rest = &candidate[1..];
        }
    }
    out.push_str(rest);
    out
}

fn check(file: &str, index: usize, receipt_json: &str) {
    let Some(expected) = recorded_block(file, "This sequence of operations was run:", index) else {
        return;
    };
    let value: serde_json::Value = serde_json::from_str(receipt_json).expect("JSON");
    let contents = Vec::<ContentsAndMetadata>::read_json(&value, "").expect("a receipt");
    assert_eq!(mask(&render_receipt(&contents)), expected);
}

const BOOTSTRAP1: &str = "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx";
const CONTRACT: &str = "KT1WcSvmiwJqDUm6cKEFjGVizXVSMujq5Kfe";

#[test]
fn transaction_to_a_contract() {
    let json = r#"[{"kind":"transaction","source":"B1","fee":"390","counter":"2","gas_limit":"1379",
      "storage_limit":"24","amount":"500000000","destination":"C1",
      "metadata":{"balance_updates":[
        {"kind":"contract","contract":"B1","change":"-390","origin":"block"},
        {"kind":"accumulator","category":"block fees","change":"390","origin":"block"}],
       "operation_result":{"status":"applied","storage":{"int":"500000000"},
        "balance_updates":[
          {"kind":"contract","contract":"B1","change":"-1000","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"1000","origin":"block"},
          {"kind":"contract","contract":"B1","change":"-500000000","origin":"block"},
          {"kind":"contract","contract":"C1","change":"500000000","origin":"block"}],
        "consumed_milligas":"1279021","storage_size":"44","paid_storage_size_diff":"4"}}}]"#;
    let json = json.replace("B1", BOOTSTRAP1).replace("C1", CONTRACT);
    check("test_transfer_amount.out", 1, &json);
}

#[test]
fn origination() {
    let json = r#"[{"kind":"origination","source":"B1","fee":"335","counter":"1","gas_limit":"680",
      "storage_limit":"317","balance":"0",
      "script":{"code":[{"prim":"parameter","args":[{"prim":"unit"}]},{"prim":"storage","args":[{"prim":"mutez"}]},
        {"prim":"code","args":[[{"prim":"DROP"},{"prim":"AMOUNT"},{"prim":"NIL","args":[{"prim":"operation"}]},{"prim":"PAIR"}]]}],
        "storage":{"int":"0"}},
      "metadata":{"balance_updates":[
        {"kind":"contract","contract":"B1","change":"-335","origin":"block"},
        {"kind":"accumulator","category":"block fees","change":"335","origin":"block"}],
       "operation_result":{"status":"applied",
        "balance_updates":[
          {"kind":"contract","contract":"B1","change":"-10000","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"10000","origin":"block"},
          {"kind":"contract","contract":"B1","change":"-64250","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"64250","origin":"block"}],
        "originated_contracts":["C1"],
        "consumed_milligas":"579127","storage_size":"40","paid_storage_size_diff":"40"}}}]"#;
    let json = json.replace("B1", BOOTSTRAP1).replace("C1", CONTRACT);
    check("test_transfer_amount.out", 0, &json);
}

const ORIGINATED: &str = "KT1BEqzn5Wx8uJrZNvuS9DVHmLvG9td3fDLi";

#[test]
fn call_with_an_internal_origination() {
    let json = r#"[{"kind":"transaction","source":"B1","fee":"441","counter":"1","gas_limit":"1895",
      "storage_limit":"315","amount":"1000000","destination":"C1",
      "metadata":{"balance_updates":[
        {"kind":"contract","contract":"B1","change":"-441","origin":"block"},
        {"kind":"accumulator","category":"block fees","change":"441","origin":"block"}],
       "operation_result":{"status":"applied","storage":{"prim":"Unit"},
        "balance_updates":[
          {"kind":"contract","contract":"B1","change":"-1000000","origin":"block"},
          {"kind":"contract","contract":"C1","change":"1000000","origin":"block"}],
        "consumed_milligas":"1290035","storage_size":"93"},
       "internal_operation_results":[{"kind":"origination","source":"C1","nonce":0,
        "balance":"1000000",
        "script":{"code":[{"prim":"parameter","args":[{"prim":"unit"}]},{"prim":"storage","args":[{"prim":"unit"}]},
          {"prim":"code","args":[[{"prim":"CDR"},{"prim":"NIL","args":[{"prim":"operation"}]},{"prim":"PAIR"}]]}],
          "storage":{"prim":"Unit"}},
        "result":{"status":"applied","balance_updates":[
          {"kind":"contract","contract":"B1","change":"-9500","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"9500","origin":"block"},
          {"kind":"contract","contract":"B1","change":"-64250","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"64250","origin":"block"},
          {"kind":"contract","contract":"C1","change":"-1000000","origin":"block"},
          {"kind":"contract","contract":"C2","change":"1000000","origin":"block"}],
         "originated_contracts":["C2"],"consumed_milligas":"505294","storage_size":"38",
         "paid_storage_size_diff":"38"}}]}}]"#;
    let json = json
        .replace("B1", BOOTSTRAP1)
        .replace("C1", CONTRACT)
        .replace("C2", ORIGINATED);
    check("Create_contract.out", 1, &json);
}

fn receipt(json: &str) -> Vec<ContentsAndMetadata<'static>> {
    let value: serde_json::Value = serde_json::from_str(json).expect("JSON");
    Vec::<ContentsAndMetadata>::read_json(&value, "").expect("a receipt")
}

#[test]
fn origination_with_a_big_map() {
    let json = r#"[{"kind":"origination","source":"B1","fee":"374","counter":"1","gas_limit":"914",
      "storage_limit":"423","balance":"0",
      "script":{"code":[{"prim":"parameter","args":[{"prim":"big_map","args":[{"prim":"int"},{"prim":"int"}]}]},
        {"prim":"storage","args":[{"prim":"big_map","args":[{"prim":"int"},{"prim":"int"}]}]},
        {"prim":"code","args":[[{"prim":"CAR"},{"prim":"NIL","args":[{"prim":"operation"}]},{"prim":"PAIR"}]]}],
        "storage":[{"prim":"Elt","args":[{"int":"0"},{"int":"0"}]}]},
      "metadata":{"balance_updates":[
        {"kind":"contract","contract":"B1","change":"-374","origin":"block"},
        {"kind":"accumulator","category":"block fees","change":"374","origin":"block"}],
       "operation_result":{"status":"applied",
        "balance_updates":[
          {"kind":"contract","contract":"B1","change":"-36500","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"36500","origin":"block"},
          {"kind":"contract","contract":"B1","change":"-64250","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"64250","origin":"block"}],
        "originated_contracts":["C1"],
        "consumed_milligas":"813216","storage_size":"146","paid_storage_size_diff":"146",
        "lazy_storage_diff":[{"kind":"big_map","id":"4","diff":{"action":"alloc",
          "updates":[{"key_hash":"exprtZBwZUeYYYfUs9B9Rg2ywHezVHnCCnmF9WsDQVrs582dSK63dC","key":{"int":"0"},"value":{"int":"0"}}],
          "key_type":{"prim":"int"},"value_type":{"prim":"int"}}}]}}}]"#;
    let json = json.replace("B1", BOOTSTRAP1).replace("C1", CONTRACT);
    check("test_big_map_origination.out", 0, &json);
}

#[test]
fn failed_simulation() {
    let Some(expected) = recorded_block("test_contract_fails.out", "This simulation failed:", 0)
    else {
        return;
    };
    let json = r#"[{"kind":"transaction","source":"B1","fee":"0","counter":"2","gas_limit":"1040000",
      "storage_limit":"60000","amount":"0","destination":"C1",
      "parameters":{"entrypoint":"default","value":{"string":"C1"}},
      "metadata":{"operation_result":{"status":"failed","errors":[
        {"kind":"temporary","id":"proto.025-PsUshuai.michelson_v1.script_rejected",
         "location":31,"with":{"prim":"Unit"}}]}}}]"#;
    let json = json.replace("B1", BOOTSTRAP1).replace("C1", CONTRACT);
    assert_eq!(mask(&render_failed_simulation(&receipt(&json))), expected);
}

const HEADING: &str = "This sequence of operations was run:";

#[test]
fn increase_paid_storage_unmasked() {
    // This recording shows its hashes: the receipt is built with them.
    let Some(expected) = recorded_block("increase_paid_storage.out", HEADING, 0) else {
        return;
    };
    let json = r#"[{"kind":"increase_paid_storage","source":"tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN",
      "fee":"265","counter":"1","gas_limit":"169","storage_limit":"0","amount":"1000",
      "destination":"KT1QmpjYa3WKEtp27inFsS66PS1UyBuvQ2TW",
      "metadata":{"balance_updates":[
        {"kind":"contract","contract":"tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN","change":"-265","origin":"block"},
        {"kind":"accumulator","category":"block fees","change":"265","origin":"block"}],
       "operation_result":{"status":"applied","balance_updates":[
        {"kind":"contract","contract":"tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN","change":"-250000","origin":"block"},
        {"kind":"burned","category":"storage fees","change":"250000","origin":"block"}],
        "consumed_milligas":"168582"}}}]"#;
    assert_eq!(render_receipt(&receipt(json)), expected);
}

#[test]
fn long_parameter_wide_storage_and_an_allocating_internal_transfer() {
    let Some(expected) = recorded_block("test_slice.out", HEADING, 1) else {
        return;
    };
    // The parameter as the recording prints it, read back (it is too long to restate here).
    let start = expected.find("Parameter: ").expect("a parameter") + "Parameter: ".len();
    let end = start
        + expected[start..]
            .find("\n      This")
            .expect("the status line");
    // Indented to its column in the receipt, so that its later lines stay aligned as the
    // parser requires.
    let column = start
        - expected[..start]
            .rfind('\n')
            .map_or(0, |newline| newline + 1);
    let source = format!("{}{}", " ".repeat(column), &expected[start..end]);
    let parameter = kestrel_micheline::parse::parse_expression(&source).expect("Micheline");
    let parameter = kestrel_micheline::json::to_json_string(&parameter);
    let json = r#"[{"kind":"transaction","source":"B1","fee":"880","counter":"2","gas_limit":"3726",
      "storage_limit":"277","amount":"0","destination":"C1",
      "parameters":{"entrypoint":"default","value":PARAMETER},
      "metadata":{"balance_updates":[
        {"kind":"contract","contract":"B1","change":"-880","origin":"block"},
        {"kind":"accumulator","category":"block fees","change":"880","origin":"block"}],
       "operation_result":{"status":"applied",
        "storage":{"bytes":"0103fe5753baadb56a4836e34571ce4cbe82158ee40eba872b848f709699019725ba"},
        "consumed_milligas":"1526689","storage_size":"578"},
       "internal_operation_results":[{"kind":"transaction","source":"C1","nonce":0,
        "amount":"1000000","destination":"B2",
        "result":{"status":"applied","balance_updates":[
          {"kind":"contract","contract":"C1","change":"-1000000","origin":"block"},
          {"kind":"contract","contract":"B2","change":"1000000","origin":"block"},
          {"kind":"contract","contract":"B1","change":"-64250","origin":"block"},
          {"kind":"burned","category":"storage fees","change":"64250","origin":"block"}],
         "consumed_milligas":"2100000","allocated_destination_contract":true}}]}}]"#;
    let json = json
        .replace("PARAMETER", &parameter)
        .replace("B1", BOOTSTRAP1)
        .replace("B2", "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN")
        .replace("C1", CONTRACT);
    assert_eq!(mask(&render_receipt(&receipt(&json))), expected);
}
