"""Transcripts: pi's own JSON (pi_json, pi_options), binary .binpb records (binpb), and the
conversion between them and ProtoJSON (convert)."""
