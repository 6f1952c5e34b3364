//! Compiles the Cap'n Proto schemas of the serialization benchmarks (`src/serialization/schema`)
//! into Rust with `capnpc`. It needs the `capnp` schema compiler on `PATH`: the OS package
//! `capnproto` provides it (`apt-get install -y capnproto`). This crate is not a default member of
//! the workspace, so the default build never needs it.

fn main() {
    let schema_dir = "src/serialization/schema";
    let mut command = capnpc::CompilerCommand::new();
    command.src_prefix(schema_dir);
    // The generated modules live at `crate::serialization::schema::*_capnp`.
    command.default_parent_module(vec!["serialization".into(), "schema".into()]);
    for name in ["carsales", "catrank", "eval"] {
        let path = format!("{schema_dir}/{name}.capnp");
        println!("cargo:rerun-if-changed={path}");
        command.file(path);
    }
    if let Err(error) = command.run() {
        panic!(
            "compiling the Cap'n Proto schemas failed ({error}); the `capnp` compiler comes from \
             the OS package `capnproto` (apt-get install -y capnproto)"
        );
    }
}
