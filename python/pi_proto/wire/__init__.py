"""The wire layer: strict binary and ProtoJSON encoding of the generated types (codec), the
schema and JSON text rules (validate), varints for size-delimited streams, and bounded file reads."""
