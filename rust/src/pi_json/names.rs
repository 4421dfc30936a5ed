//! pi's words for the schema's enums. A word pi does not define is refused when read, as nothing
//! could hold it; a value without a word (unspecified) is left out when written, or refused where
//! pi's object must have one.

use crate::v1::{ModelThinkingLevel, NestedCallStatus, StopReason, Strictness};

/// A table of pi's words and the values they stand for, in pi's order.
pub(super) type Words<E> = [(&'static str, E)];

pub(super) const STOP_REASONS: &Words<StopReason> = &[
    ("stop", StopReason::Stop),
    ("length", StopReason::Length),
    ("toolUse", StopReason::ToolUse),
    ("error", StopReason::Error),
    ("aborted", StopReason::Aborted),
    ("pending", StopReason::Pending),
    ("deferred", StopReason::Deferred),
];

pub(super) const THINKING_LEVELS: &Words<ModelThinkingLevel> = &[
    ("off", ModelThinkingLevel::Off),
    ("minimal", ModelThinkingLevel::Minimal),
    ("low", ModelThinkingLevel::Low),
    ("medium", ModelThinkingLevel::Medium),
    ("high", ModelThinkingLevel::High),
    ("xhigh", ModelThinkingLevel::Xhigh),
    ("max", ModelThinkingLevel::Max),
];

pub(super) const NESTED_CALL_STATUSES: &Words<NestedCallStatus> = &[
    ("ok", NestedCallStatus::Ok),
    ("error", NestedCallStatus::Error),
    ("unfinished", NestedCallStatus::Unfinished),
];

pub(super) const STRICTNESS: &Words<Strictness> = &[
    ("prefer", Strictness::Prefer),
    ("require", Strictness::Require),
];

/// The value of pi's word `word`.
pub(super) fn value_of<E: Copy>(words: &Words<E>, word: &str) -> Option<E> {
    words
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, value)| *value)
}

/// pi's word for the enum value `number` (a message's field), if pi has one.
pub(super) fn word_of<E: Copy + Into<i32>>(words: &Words<E>, number: i32) -> Option<&'static str> {
    words
        .iter()
        .find(|(_, value)| (*value).into() == number)
        .map(|(word, _)| *word)
}

/// The words of a table, for a message: "stop, length, toolUse".
pub(super) fn listed<E>(words: &Words<E>) -> String {
    words
        .iter()
        .map(|(word, _)| *word)
        .collect::<Vec<_>>()
        .join(", ")
}
