//! Generates the pi.ai.v1 types, their ProtoJSON (serde) impls, their prost-reflect descriptors
//! and the ModelService client from `proto/` at build time, and, with the `conformance` feature
//! (the conformance executor's, not for users), the pi.conformance.v1 types. protox compiles the
//! .proto files in pure Rust.
//!
//! `proto/pi` is a copy of the repository's `../proto/pi`, inside the crate so that the packaged
//! crate builds on its own; in the repository, `make sync-proto` makes it (every make target runs
//! it before cargo).
//!
//! `buf/validate/validate.proto` comes from the descriptor pool of the prost-protovalidate-types
//! crate, the same schema the validator evaluates, so nothing has to be fetched first.

use std::path::{Path, PathBuf};

use protox::Compiler;
use protox::file::{
    ChainFileResolver, DescriptorSetFileResolver, GoogleFileResolver, IncludeFileResolver,
};

const PROTO_ROOT: &str = "proto";
const FILES: [&str; 9] = [
    "pi/ai/v1/json.proto",
    "pi/ai/v1/content.proto",
    "pi/ai/v1/tool.proto",
    "pi/ai/v1/message.proto",
    "pi/ai/v1/transcript.proto",
    "pi/ai/v1/context.proto",
    "pi/ai/v1/event.proto",
    "pi/ai/v1/model.proto",
    "pi/ai/v1/service.proto",
];
/// Compiled only with the `conformance` feature.
const CONFORMANCE: &str = "pi/conformance/v1/conformance.proto";
/// The map fields, generated as BTreeMaps: they encode their entries in key order, as every
/// runtime does, so a message has one encoding. (pbjson-build matches the message's path.)
const HEADERS: &str = ".pi.ai.v1.GenerationOptions.headers";
const HEADERS_MESSAGE: &str = ".pi.ai.v1.GenerationOptions";
/// The events of a batch as `Bytes`: they are slices of the received message, not copies.
const BATCHED_EVENTS: &str = ".pi.ai.v1.StreamBatchedView.events";
/// `google.protobuf.NullValue` (a transcript entry's `root`): prost-types has no serde impls, so
/// the crate's own enum stands for it, in the prost types and in the pbjson impls alike.
const NULL_VALUE: &str = ".google.protobuf.NullValue";
const NULL_VALUE_RUST: &str = "crate::null_value::NullValue";
/// The descriptor set the runtime decodes into its pool: our files and everything they import,
/// with their options (the validation rules) and without source info.
const DESCRIPTOR_SET: &str = "pi_proto_descriptors.bin";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(PROTO_ROOT);
    if !root.join(FILES[0]).exists() {
        return Err("proto/pi is missing: run `make -C rust sync-proto` (it copies the repository's proto/pi)".into());
    }
    let conformance = std::env::var_os("CARGO_FEATURE_CONFORMANCE").is_some();
    let mut files = FILES.to_vec();
    if conformance {
        files.push(CONFORMANCE);
    }
    for file in &files {
        println!("cargo:rerun-if-changed={}", root.join(file).display());
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);

    let mut resolver = ChainFileResolver::new();
    resolver.add(IncludeFileResolver::new(root.to_path_buf()));
    let validate = prost_protovalidate_types::DESCRIPTOR_POOL.encode_to_vec();
    resolver.add(DescriptorSetFileResolver::decode(validate.as_slice())?);
    resolver.add(GoogleFileResolver::new());
    let mut compiler = Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    compiler.open_files(&files)?;
    // With source info: the generated code carries the schema's comments.
    let with_comments = compiler.file_descriptor_set();
    compiler.include_source_info(false);
    std::fs::write(
        out_dir.join(DESCRIPTOR_SET),
        compiler.encode_file_descriptor_set(),
    )?;

    generate_types(&with_comments)?;
    if conformance {
        generate_conformance(&with_comments)?;
    }
    Ok(())
}

/// pi.ai.v1: prost types that also implement prost-reflect's `ReflectMessage` (which the
/// validator reads the rules through), pbjson's serde impls, and the tonic client.
fn generate_types(all: &prost_types::FileDescriptorSet) -> Result<(), Box<dyn std::error::Error>> {
    let files = files_of(all, "pi.ai.v1");
    let mut json = pbjson_build::Builder::new();
    // google.protobuf's files too, so pbjson knows NullValue for an enum; it generates only ours.
    for file in files
        .file
        .iter()
        .chain(&files_of(all, "google.protobuf").file)
    {
        json.register_file_descriptor(file.clone());
    }
    json.btree_map([HEADERS_MESSAGE])
        .extern_path(NULL_VALUE, NULL_VALUE_RUST)
        .build(&[".pi.ai.v1"])?;

    let mut builder = tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .btree_map(HEADERS)
        .bytes(BATCHED_EVENTS)
        .extern_path(NULL_VALUE, NULL_VALUE_RUST);
    for file in &files.file {
        for message in &file.message_type {
            let name = format!("{}.{}", file.package(), message.name());
            builder = reflect(builder, &name, message);
        }
    }
    builder.compile_fds(files)?;
    Ok(())
}

/// Derive `ReflectMessage` for `message` and its nested messages, from the crate's pool.
fn reflect(
    mut builder: tonic_prost_build::Builder,
    name: &str,
    message: &prost_types::DescriptorProto,
) -> tonic_prost_build::Builder {
    builder = builder.message_attribute(
        format!(".{name}"),
        format!(
            "#[derive(::prost_reflect::ReflectMessage)]\n\
             #[prost_reflect(descriptor_pool = \"crate::descriptors::POOL\", message_name = \"{name}\")]"
        ),
    );
    for nested in &message.nested_type {
        builder = reflect(builder, &format!("{name}.{}", nested.name()), nested);
    }
    builder
}

/// pi.conformance.v1, for the conformance executor (an example): prost types that refer to the
/// crate's own `pi_proto::v1` types, so a case's messages reach the public API as they are.
fn generate_conformance(
    all: &prost_types::FileDescriptorSet,
) -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?).join("conformance");
    std::fs::create_dir_all(&out_dir)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(false)
        .build_transport(false)
        .out_dir(&out_dir)
        .extern_path(".pi.ai.v1", "::pi_proto::v1")
        // prost-build needs every message the file refers to, and writes them all out too.
        .compile_fds(all.clone())?;
    Ok(())
}

/// The files of one package.
fn files_of(all: &prost_types::FileDescriptorSet, package: &str) -> prost_types::FileDescriptorSet {
    prost_types::FileDescriptorSet {
        file: all
            .file
            .iter()
            .filter(|file| file.package() == package)
            .cloned()
            .collect(),
    }
}
