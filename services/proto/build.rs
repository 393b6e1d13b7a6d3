//! Compiles `proto/` with protox (pure Rust, no system `protoc`) and keeps
//! the descriptor set for gRPC reflection.
//!
//! `ludo/v1/ludo.proto` is compiled with every file it imports: the
//! published games' messages, which its `oneof`s name. With the feature
//! `test-game`, each file under `proto/test/` (a test-only game's messages,
//! docs/adding-a-game.md) is compiled too and joined to those `oneof`s
//! here, in the descriptors, so that the published contract never names it.

use std::path::{Path, PathBuf};

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::source_code_info::Location;
use prost_types::{FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet};

/// The envelope messages of `ludo.v1` whose `oneof game` holds one field
/// per game, each of the game's own message of the same name.
const PER_GAME: [&str; 4] = ["Options", "Move", "View", "Effect"];

/// The field numbers of the test-only games start here, far above any a
/// published game takes; they are never published nor stored.
const FIRST_TEST_FIELD: i32 = 1000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read when the script runs, not when it was compiled: a build script
    // compiled in one checkout may be run for another sharing its target
    // directory, and would read the first one's protos (or fail once it is gone).
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let test_root = root.join("test");
    println!("cargo:rerun-if-changed={}", root.display());
    let test_games = if std::env::var_os("CARGO_FEATURE_TEST_GAME").is_some() { proto_files(&test_root, &test_root)? } else { Vec::new() };
    let mut files = vec!["ludo/v1/ludo.proto".to_string()];
    files.extend(test_games.iter().cloned());
    let mut descriptors = protox::compile(&files, [&root, &test_root])?;
    for (index, file) in test_games.iter().enumerate() {
        join_oneofs(&mut descriptors, file, FIRST_TEST_FIELD + i32::try_from(index)?)?;
    }
    if !test_games.is_empty() {
        // ludo.proto now imports the test games: in a descriptor set a file
        // comes after the files it imports (clients that build a registry
        // from the set, as protobuf-es does, read it in order).
        let at = descriptors.file.iter().position(|f| f.name() == "ludo/v1/ludo.proto").ok_or("ludo/v1/ludo.proto was not compiled")?;
        let ludo = descriptors.file.remove(at);
        descriptors.file.push(ludo);
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("ludo_descriptor.bin"), prost::Message::encode_to_vec(&descriptors))?;
    // Malformed messages are the caller's fault: INVALID_ARGUMENT, not prost's INTERNAL.
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .codec_path("crate::codec::StrictCodec")
        .include_file("packages.rs")
        .compile_fds(descriptors)?;
    Ok(())
}

/// The `.proto` files under `dir`, named from `root`, sorted.
fn proto_files(dir: &Path, root: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut files = Vec::new();
    if !dir.exists() {
        return Ok(files);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(proto_files(&path, root)?);
        } else if path.extension().is_some_and(|e| e == "proto") {
            files.push(path.strip_prefix(root)?.to_string_lossy().replace('\\', "/"));
        }
    }
    files.sort();
    Ok(files)
}

/// Joins the test game of proto file `name` (package `ludo.<kind>.v1`) to
/// the `oneof game` of each of `ludo.v1`'s [`PER_GAME`] messages, as the
/// field `<kind>` numbered `number`: what a published game writes in
/// `ludo.proto` itself.
fn join_oneofs(descriptors: &mut FileDescriptorSet, name: &str, number: i32) -> Result<(), Box<dyn std::error::Error>> {
    let game = descriptors.file.iter().find(|f| f.name() == name).ok_or_else(|| format!("{name} was not compiled"))?;
    let package = game.package().to_string();
    let kind = package
        .strip_prefix("ludo.")
        .and_then(|p| p.strip_suffix(".v1"))
        .ok_or_else(|| format!("{name}: the package of a game is `ludo.<kind>.v1`, not `{package}`"))?
        .to_string();
    let ludo: &mut FileDescriptorProto =
        descriptors.file.iter_mut().find(|f| f.name() == "ludo/v1/ludo.proto").ok_or("ludo/v1/ludo.proto was not compiled")?;
    ludo.dependency.push(name.to_string());
    for message in PER_GAME {
        let index = ludo.message_type.iter().position(|m| m.name() == message).ok_or_else(|| format!("ludo.v1.{message} is missing"))?;
        let envelope = &mut ludo.message_type[index];
        let oneof =
            envelope.oneof_decl.iter().position(|o| o.name() == "game").ok_or_else(|| format!("ludo.v1.{message} has no `oneof game`"))?;
        envelope.field.push(FieldDescriptorProto {
            name: Some(kind.clone()),
            number: Some(number),
            label: Some(Label::Optional.into()),
            r#type: Some(Type::Message.into()),
            type_name: Some(format!(".{package}.{message}")),
            oneof_index: Some(i32::try_from(oneof)?),
            json_name: Some(kind.clone()),
            ..FieldDescriptorProto::default()
        });
        // prost looks up each field's comments by its path in the file's
        // (sorted) source locations: the new field needs one.
        let path = vec![4, i32::try_from(index)?, 2, i32::try_from(envelope.field.len() - 1)?];
        if let Some(info) = ludo.source_code_info.as_mut() {
            let at = info.location.partition_point(|l| l.path < path);
            let comment = format!(" {kind}: a test-only game (feature `test-game`), from {name}.\n");
            info.location.insert(at, Location { path, span: vec![0, 0, 0], leading_comments: Some(comment), ..Location::default() });
        }
    }
    Ok(())
}
