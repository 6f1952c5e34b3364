//! PACK vectors of the shared test data (`encoding/micheline-pack-vectors.tsv`: type, value,
//! packed hex). The values there pack the same typed or untyped, so untyped PACK must match.

use kestrel_micheline::{pack, parse_expression};

#[test]
fn every_pack_vector_matches() {
    let Some(path) = kestrel_testdata::require(
        "encoding/micheline-pack-vectors.tsv",
        "every_pack_vector_matches",
    ) else {
        return;
    };
    let contents = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut checked = 0;
    for line in contents.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let columns: Vec<&str> = line.split('\t').collect();
        assert_eq!(columns.len(), 3, "malformed line {line:?}");
        let (value, expected_hex) = (columns[1], columns[2]);
        let node = parse_expression(value).unwrap_or_else(|e| panic!("{value}: {e}"));
        let packed = pack::pack(&node).unwrap_or_else(|e| panic!("{value}: {e}"));
        let hex: String = packed.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, expected_hex, "{value}");
        assert_eq!(pack::unpack(&packed), Ok(node), "{value}");
        checked += 1;
    }
    assert!(checked > 0, "no vector in {}", path.display());
}
