//! The gRPC contract of ludotheque, generated from `proto/` at build time.
//! Modules follow the proto packages: `ludo::v1` (the game service and its
//! envelope messages) and one `ludo::<kind>::v1` per game (its options,
//! moves, views and effects), as many as `proto/ludo/v1/ludo.proto` imports.
#![allow(clippy::all, missing_docs)]

pub mod codec;

// Generated code, one module per proto package.
include!(concat!(env!("OUT_DIR"), "/packages.rs"));

pub use ludo::v1;

/// The encoded `FileDescriptorSet` of every proto file, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ludo_descriptor.bin"));
