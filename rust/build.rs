//! Generates the pi.ai.v1 types, their ProtoJSON (serde) impls and the ModelService client from
//! `../proto` at build time. protox compiles the .proto files in pure Rust, so no protoc binary
//! is needed.

use std::path::Path;

const PROTO_ROOT: &str = "../proto";
// buf/validate/validate.proto, fetched by `make proto-deps`.
const DEPS_ROOT: &str = "../build/proto-deps";
const FILES: [&str; 5] = [
    "pi/ai/v1/content.proto",
    "pi/ai/v1/message.proto",
    "pi/ai/v1/context.proto",
    "pi/ai/v1/event.proto",
    "pi/ai/v1/service.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(PROTO_ROOT);
    for file in FILES {
        println!("cargo:rerun-if-changed={}", root.join(file).display());
    }
    let descriptors = protox::compile(FILES, [root, Path::new(DEPS_ROOT)])?;

    let mut json = pbjson_build::Builder::new();
    for file in &descriptors.file {
        json.register_file_descriptor(file.clone());
    }
    json.build(&[".pi.ai.v1"])?;

    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}
