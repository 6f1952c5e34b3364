//! The node's contract RPCs against Octez's own answers: `octez-client rpc get` on a client-mode
//! node, recorded in `testdata/octez-protocol/rpc/rpc-contracts.out` (hashes and keys masked).
//! For each recorded subject — a bootstrap account, a never-seen account, a funded unrevealed
//! account, a revealed delegated account, a contract with a script — the same RPCs on the
//! node's equivalent must answer with the same key sets and value kinds, and 404 where Octez
//! found no service.

mod support;

use kestrel_node::Chain;
use serde_json::Value;
use support::{call, inject, signed_by_bootstrap1, signed_transfer, BOOTSTRAP1};

/// The recorded subjects compared, in the file's order (later ones need scripts the node's
/// test does not originate).
const SUBJECTS: usize = 5;

/// A never-seen account.
const UNKNOWN: &str = "tz1Ke2h7sDdakHJQh8WX4Z372du1KChsksyU";
/// The account funded (not revealed).
const FUNDED: &str = "tz1REAXaYHAY3YaKtYkZHCJ2RuwbbrKd5yU9";

/// One recorded request: its path's suffix after the contract id, and the answer (`None`: Octez
/// found no service).
struct Recorded {
    suffix: String,
    answer: Option<Value>,
}

/// The `rpc get …/contracts/<id>[/suffix]` entries, grouped by subject (a group starts at each
/// GET of a whole contract).
fn recorded_subjects(text: &str) -> Vec<Vec<Recorded>> {
    let mut subjects: Vec<Vec<Recorded>> = Vec::new();
    for entry in text.split("\n./octez-client ") {
        let Some((command, answer)) = entry.split_once('\n') else {
            continue;
        };
        let Some(path) = command
            .strip_prefix("rpc get '/chains/main/blocks/head/context/contracts/")
            .map(|path| path.trim_end_matches('\''))
        else {
            continue;
        };
        let suffix = path.split_once('/').map_or("", |(_, suffix)| suffix);
        if suffix.is_empty() {
            subjects.push(Vec::new());
        }
        let answer = if answer.trim_start().starts_with("Fatal error") {
            None
        } else {
            Some(serde_json::from_str(answer).expect("a recorded answer is JSON"))
        };
        if let Some(subject) = subjects.last_mut() {
            subject.push(Recorded {
                suffix: suffix.to_string(),
                answer,
            });
        }
    }
    subjects
}

/// Whether `ours` has the shape of `theirs`: the same kind, the same object keys, and the same
/// shapes inside (arrays element by element).
fn same_shape(ours: &Value, theirs: &Value) -> Result<(), String> {
    let mut pending = vec![(ours, theirs, String::new())];
    while let Some((ours, theirs, path)) = pending.pop() {
        match (ours, theirs) {
            (Value::Object(ours), Value::Object(theirs)) => {
                let our_keys: Vec<&String> = ours.keys().collect();
                let their_keys: Vec<&String> = theirs.keys().collect();
                let (mut sorted_ours, mut sorted_theirs) = (our_keys.clone(), their_keys.clone());
                sorted_ours.sort();
                sorted_theirs.sort();
                if sorted_ours != sorted_theirs {
                    return Err(format!("{path}: keys {our_keys:?}, Octez {their_keys:?}"));
                }
                for (key, value) in theirs {
                    pending.push((&ours[key], value, format!("{path}/{key}")));
                }
            }
            (Value::Array(ours), Value::Array(theirs)) => {
                if ours.len() != theirs.len() {
                    return Err(format!(
                        "{path}: {} elements, Octez {}",
                        ours.len(),
                        theirs.len()
                    ));
                }
                for (index, (ours, theirs)) in ours.iter().zip(theirs).enumerate() {
                    pending.push((ours, theirs, format!("{path}/{index}")));
                }
            }
            (Value::String(_), Value::String(_))
            | (Value::Number(_), Value::Number(_))
            | (Value::Bool(_), Value::Bool(_))
            | (Value::Null, Value::Null) => {}
            _ => return Err(format!("{path}: {ours}, Octez {theirs}")),
        }
    }
    Ok(())
}

/// The node's counterpart of each recorded subject.
fn subjects(chain: &mut Chain) -> Vec<String> {
    let funding = signed_transfer(chain, 1, 100_000_000, FUNDED);
    inject(chain, &funding);
    // The recorded contract: `parameter string; storage (option string)`, storing its argument.
    let origination = signed_by_bootstrap1(
        chain,
        &format!(
            r#"[{{"kind": "origination", "source": "{BOOTSTRAP1}", "fee": "2000", "counter": "2",
            "gas_limit": "5000", "storage_limit": "600", "balance": "0",
            "script": {{"code": [{{"prim": "parameter", "args": [{{"prim": "string"}}]}},
              {{"prim": "storage", "args": [{{"prim": "option", "args": [{{"prim": "string"}}]}}]}},
              {{"prim": "code", "args": [[{{"prim": "CAR"}}, {{"prim": "SOME"}},
                {{"prim": "NIL", "args": [{{"prim": "operation"}}]}}, {{"prim": "PAIR"}}]]}}],
              "storage": {{"prim": "Some", "args": [{{"string": "initial storage"}}]}}}}}}]"#
        ),
    );
    let block = inject(chain, &origination);
    let contract = block["operations"][3][0]["contents"][0]["metadata"]["operation_result"]
        ["originated_contracts"][0]
        .as_str()
        .expect("an originated contract")
        .to_string();
    vec![
        BOOTSTRAP1.to_string(),
        UNKNOWN.to_string(),
        FUNDED.to_string(),
        support::BOOTSTRAP2.to_string(),
        contract,
    ]
}

#[test]
fn contract_rpcs_have_octez_shapes() {
    let Some(path) = kestrel_testdata::require(
        "octez-protocol/rpc/rpc-contracts.out",
        "contract_rpcs_have_octez_shapes",
    ) else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("readable");
    let recorded = recorded_subjects(&text);
    assert!(recorded.len() >= SUBJECTS, "{} subjects", recorded.len());
    let scratch = support::Scratch::new("shapes");
    let mut chain = support::new_chain_in(&scratch);
    let ours = subjects(&mut chain);
    let mut compared = 0;
    for (subject, entries) in ours.iter().zip(&recorded) {
        for entry in entries {
            let path = match entry.suffix.as_str() {
                "" => format!("/chains/main/blocks/head/context/contracts/{subject}"),
                suffix => format!("/chains/main/blocks/head/context/contracts/{subject}/{suffix}"),
            };
            let response = call(&mut chain, "GET", &path, "");
            match &entry.answer {
                None => assert_eq!(response.status, 404, "{path}"),
                Some(theirs) => {
                    assert_eq!(response.status, 200, "{path}");
                    let ours: Value = serde_json::from_slice(&response.body).expect("JSON");
                    if let Err(difference) = same_shape(&ours, theirs) {
                        panic!("{path}: {difference}");
                    }
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 25, "{compared} answers compared");
}
