//! The descriptors of the pi.ai.v1 schema, with its options: protovalidate reads the
//! `buf.validate` rules through them, and the JSON text walker the `pi.ai.v1.json` option.

use std::sync::LazyLock;

use prost_reflect::DescriptorPool;

/// Every file of the schema and what it imports, as `build.rs` compiled them.
pub(crate) static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    let bytes = include_bytes!(concat!(env!("OUT_DIR"), "/pi_proto_descriptors.bin"));
    DescriptorPool::decode(bytes.as_slice()).expect("build.rs writes a valid descriptor set")
});
