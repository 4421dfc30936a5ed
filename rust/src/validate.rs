//! Message rules: what a well-formed finished assistant message is, beyond what the wire format
//! checks. Each failure names the path of the field and the rule, with the text of the Python
//! runtime, e.g. `message.content[1].tool_call.arguments_json: must be a JSON object, got list`.

use std::fmt;

use serde_json::{Map, Value};

use crate::v1::assistant_content::Block;
use crate::v1::{AssistantMessage, StopReason};

/// A message that breaks a rule, with the path of the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError(pub String);

impl fmt::Display for ValidationError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for ValidationError {}

/// Bounds on the JSON text a message may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest `*_json` field, in bytes of UTF-8.
    pub max_json_bytes: usize,
    /// Deepest nesting of objects and arrays in a `*_json` field.
    pub max_json_depth: usize,
}

impl Default for Limits {
    /// Room for a 4 MiB tool argument or result, nested at most 64 deep.
    fn default() -> Self {
        Self {
            max_json_bytes: 4 * 1024 * 1024,
            max_json_depth: 64,
        }
    }
}

/// Check a finished assistant message: stop reason set, blocks set, tool calls well formed.
pub fn check_assistant(
    message: &AssistantMessage,
    path: &str,
    limits: &Limits,
) -> Result<(), ValidationError> {
    if message.stop_reason == StopReason::Unspecified as i32 {
        return Err(ValidationError(format!("{path}.stop_reason: must be set")));
    }
    for (index, content) in message.content.iter().enumerate() {
        let at = format!("{path}.content[{index}]");
        let (member, extra_json) = match &content.block {
            None => {
                return Err(ValidationError(format!(
                    "{at}.block: exactly one of text, thinking, tool_call must be set, found none"
                )));
            }
            Some(Block::Text(text)) => ("text", &text.extra_json),
            Some(Block::Thinking(thinking)) => ("thinking", &thinking.extra_json),
            Some(Block::ToolCall(call)) => {
                let at = format!("{at}.tool_call");
                if call.id.is_empty() {
                    return Err(ValidationError(format!("{at}.id: must not be empty")));
                }
                if call.name.is_empty() {
                    return Err(ValidationError(format!("{at}.name: must not be empty")));
                }
                parse_json_object(
                    &call.arguments_json,
                    &format!("{at}.arguments_json"),
                    limits,
                    "a JSON object",
                )?;
                ("tool_call", &call.extra_json)
            }
        };
        check_extra(extra_json, &format!("{at}.{member}"), limits)?;
    }
    check_extra(&message.extra_json, path, limits)
}

/// Parse JSON text that must hold an object (`what` names it in the error), within the size
/// and depth limits.
pub fn parse_json_object(
    text: &str,
    path: &str,
    limits: &Limits,
    what: &str,
) -> Result<Map<String, Value>, ValidationError> {
    if text.len() > limits.max_json_bytes {
        return Err(ValidationError(format!(
            "{path}: {} bytes of JSON, above the limit of {}",
            text.len(),
            limits.max_json_bytes
        )));
    }
    let too_deep = || {
        ValidationError(format!(
            "{path}: JSON nested deeper than the limit of {}",
            limits.max_json_depth
        ))
    };
    let value: Value = serde_json::from_str(text).map_err(|error| {
        // serde_json stops at 128 levels, past any limit we allow: that is "too deep", not "invalid".
        if error.to_string().starts_with("recursion limit exceeded") {
            too_deep()
        } else {
            ValidationError(format!("{path}: not valid JSON: {error}"))
        }
    })?;
    let object = match value {
        Value::Object(object) => object,
        other => {
            return Err(ValidationError(format!(
                "{path}: must be {what}, got {}",
                json_type(&other)
            )));
        }
    };
    if depth(&object) > limits.max_json_depth {
        return Err(too_deep());
    }
    Ok(object)
}

fn check_extra(extra_json: &str, path: &str, limits: &Limits) -> Result<(), ValidationError> {
    if !extra_json.is_empty() {
        parse_json_object(
            extra_json,
            &format!("{path}.extra_json"),
            limits,
            "a JSON object",
        )?;
    }
    Ok(())
}

/// Nesting depth of a parsed JSON object and the objects and arrays in it; the object itself is
/// level 1. Without recursion, as the value may be deep.
fn depth(object: &Map<String, Value>) -> usize {
    let mut deepest = 1;
    let mut stack: Vec<(&Value, usize)> = object.values().map(|child| (child, 2)).collect();
    while let Some((value, level)) = stack.pop() {
        let children: Vec<&Value> = match value {
            Value::Object(map) => map.values().collect(),
            Value::Array(items) => items.iter().collect(),
            _ => continue,
        };
        deepest = deepest.max(level);
        stack.extend(children.into_iter().map(|child| (child, level + 1)));
    }
    deepest
}

/// The JSON type's name as the Python runtime words it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "list",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Number(_) => "number",
        Value::Object(_) => "object",
    }
}
