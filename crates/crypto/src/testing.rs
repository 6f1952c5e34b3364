//! Test helpers: read shared test data files in place and pull literals out of them.

/// The text of `relative` under the shared test data, or `None` (with one line saying why) when
/// the data is missing outside CI.
pub fn read(relative: &str, test_name: &str) -> Option<String> {
    let path = kestrel_testdata::require(relative, test_name)?;
    Some(
        std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display())),
    )
}

/// Every double-quoted string literal in `text`, in order (no escapes occur in these files).
pub fn quoted(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).collect()
}

/// Every `0x...` bytes literal in `text`, decoded, in order.
pub fn hex_literals(text: &str) -> Vec<Vec<u8>> {
    text.split("0x")
        .skip(1)
        .map(|rest| {
            let digits = rest
                .split(|c: char| !c.is_ascii_hexdigit())
                .next()
                .unwrap_or("");
            hex::decode(digits).unwrap_or_else(|error| panic!("0x{digits}: {error}"))
        })
        .collect()
}

/// The payload of a PACKed bytes-like value: `0x05 0x0a` then a 4-byte length then the bytes.
pub fn packed_bytes(packed: &[u8]) -> &[u8] {
    assert_eq!(&packed[..2], &[0x05, 0x0a], "PACK of a bytes-encoded value");
    let length = u32::from_be_bytes([packed[2], packed[3], packed[4], packed[5]]) as usize;
    assert_eq!(packed.len(), 6 + length);
    &packed[6..]
}
