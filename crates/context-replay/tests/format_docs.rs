//! The trace format's constants in code and in docs/formats/trace-format.md agree.

use kestrel_context_replay::trace;
use kestrel_testdata::check_documented_constants as check;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn trace_constants() {
    check(
        "trace-format.md",
        &[
            ("TRACE_MAGIC", text(&trace::TRACE_MAGIC)),
            ("TRACE_VERSION", trace::TRACE_VERSION.to_string()),
            ("ROW_CHECKOUT", trace::ROW_CHECKOUT.to_string()),
            ("ROW_ADD", trace::ROW_ADD.to_string()),
            ("ROW_REMOVE", trace::ROW_REMOVE.to_string()),
            ("ROW_COPY", trace::ROW_COPY.to_string()),
            ("ROW_FIND", trace::ROW_FIND.to_string()),
            ("ROW_MEM", trace::ROW_MEM.to_string()),
            ("ROW_MEM_TREE", trace::ROW_MEM_TREE.to_string()),
            ("ROW_COMMIT", trace::ROW_COMMIT.to_string()),
            (
                "TRACE_ROW_MAX_BYTES",
                trace::TRACE_ROW_MAX_BYTES.to_string(),
            ),
            (
                "TRACE_KEY_MAX_COMPONENTS",
                trace::TRACE_KEY_MAX_COMPONENTS.to_string(),
            ),
            ("TRACE_PARENTS_MAX", trace::TRACE_PARENTS_MAX.to_string()),
        ],
    );
}
