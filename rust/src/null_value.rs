//! `google.protobuf.NullValue`, which the schema uses for a transcript entry's `root` (pi's
//! `"parentId":null`). prost-types' enum has no serde impls, which pbjson's ProtoJSON needs, so
//! `build.rs` points the generated code here.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The one value of `google.protobuf.NullValue`; its ProtoJSON is `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration)]
pub enum NullValue {
    /// JSON's `null`.
    NullValue = 0,
}

impl Serialize for NullValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

impl<'de> Deserialize<'de> for NullValue {
    /// `null`, or the value's name, which ProtoJSON accepts for any enum.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Option::<String>::deserialize(deserializer)?.as_deref() {
            None | Some("NULL_VALUE") => Ok(Self::NullValue),
            Some(other) => Err(serde::de::Error::custom(format!(
                "not a google.protobuf.NullValue: {other:?}"
            ))),
        }
    }
}
