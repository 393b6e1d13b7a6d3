//! The gRPC contract of ludotheque, generated from `proto/` at build time.
//! Modules follow the proto packages (`ludo.v1`, `ludo.cardinal.v1`, …).
#![allow(clippy::all, missing_docs)]

pub mod codec;

/// Generated code, one module per proto package.
pub mod ludo {
    /// The game service and its envelope messages.
    pub mod v1 {
        tonic::include_proto!("ludo.v1");
    }
    /// Cardinal's options, moves, views and effects.
    pub mod cardinal {
        pub mod v1 {
            tonic::include_proto!("ludo.cardinal.v1");
        }
    }
    /// Kardinal & König's options (with the board), moves, views and effects.
    pub mod kardinal {
        pub mod v1 {
            tonic::include_proto!("ludo.kardinal.v1");
        }
    }
    /// Battle 13's options, moves, views and effects.
    pub mod battle13 {
        pub mod v1 {
            tonic::include_proto!("ludo.battle13.v1");
        }
    }
}

pub use ludo::battle13::v1 as battle13;
pub use ludo::cardinal::v1 as cardinal;
pub use ludo::kardinal::v1 as kardinal;
pub use ludo::v1;

/// The encoded `FileDescriptorSet` of every proto file, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ludo_descriptor.bin"));
