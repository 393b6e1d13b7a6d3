//! Compiles `proto/` with protox (pure Rust, no system `protoc`) and keeps
//! the descriptor set for gRPC reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read when the script runs, not when it was compiled: a build script
    // compiled in one checkout may be run for another sharing its target
    // directory, and would read the first one's protos (or fail once it is gone).
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files =
        ["ludo/v1/ludo.proto", "ludo/cardinal/v1/cardinal.proto", "ludo/kardinal/v1/kardinal.proto", "ludo/battle13/v1/battle13.proto"];
    println!("cargo:rerun-if-changed={}", root.display());
    let descriptors = protox::compile(files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("ludo_descriptor.bin"), prost::Message::encode_to_vec(&descriptors))?;
    // Malformed messages are the caller's fault: INVALID_ARGUMENT, not prost's INTERNAL.
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .codec_path("crate::codec::StrictCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
