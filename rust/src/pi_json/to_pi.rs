//! Writing the pi.ai.v1 messages and contexts as pi-JSON objects.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

use super::keys::{KEYS, ORDER_KEY, in_order};
use super::names::{
    NESTED_CALL_STATUSES, STOP_REASONS, STRICTNESS, THINKING_LEVELS, Words, listed, word_of,
};
use super::reader::type_name;
use super::{PiJsonError, Result, at};
use crate::js_json::{JsonObject, parse_field_json};
use crate::v1::agent_message::Role;
use crate::v1::constrained_sampling::Config;
use crate::v1::diagnostic_error::Code;
use crate::v1::{
    AgentContext, AgentMessage, AssistantContent, AssistantMessage, ConstrainedSampling, Cost,
    DeferredHandle, Diagnostic, DiagnosticError, ImageContent, NestedToolCall, NestedToolCalls,
    SystemMessage, SystemSection, TextContent, Tool, ToolReference, ToolResultMessage, Usage,
    UserMessage, assistant_content, tool_result_content, user_content,
};

/// A message as its pi-JSON object.
///
/// # Errors
/// A [`PiJsonError`] when pi-JSON cannot hold the message: no role or block set, an enum pi's
/// object needs left unspecified, a `*_json` field that is not JSON.
pub fn message_to_pi(message: &AgentMessage) -> Result<JsonObject> {
    match &message.role {
        Some(Role::System(system)) => system_to_pi(system),
        Some(Role::User(user)) => user_to_pi(user),
        Some(Role::Assistant(assistant)) => assistant_to_pi(assistant),
        Some(Role::ToolResult(result)) => tool_result_to_pi(result),
        Some(Role::Custom(custom)) => {
            let mut out = JsonObject::new();
            out.insert("role".to_owned(), Value::String(custom.role.clone()));
            out.extend(json_object(
                &custom.fields_json,
                "CustomMessage.fields_json",
            )?);
            Ok(out)
        }
        None => Err(PiJsonError::new("AgentMessage", "no role is set")),
    }
}

/// An assistant message as its pi-JSON object.
///
/// # Errors
/// As [`message_to_pi`].
pub fn assistant_to_pi(message: &AssistantMessage) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("role".to_owned(), "assistant".into());
    let content = message.content.iter().map(assistant_block_to_pi);
    out.insert("content".to_owned(), objects(content)?);
    put(&mut out, "api", message.api.clone());
    put(&mut out, "provider", message.provider.clone());
    put(&mut out, "model", message.model.clone());
    put(
        &mut out,
        "usage",
        message.usage.as_ref().map(usage_to_pi).transpose()?,
    );
    put(
        &mut out,
        "stopReason",
        word_of(STOP_REASONS, message.stop_reason),
    );
    put(
        &mut out,
        "deferred",
        message.deferred.as_ref().map(deferred_to_pi).transpose()?,
    );
    put(&mut out, "timestamp", message.timestamp);
    put(
        &mut out,
        "providerThinkingLevel",
        message.provider_thinking_level.clone(),
    );
    put(&mut out, "responseId", message.response_id.clone());
    put(&mut out, "responseModel", message.response_model.clone());
    put(&mut out, "rawStopReason", message.raw_stop_reason.clone());
    put(&mut out, "endTurn", message.end_turn);
    // pi sets it once the call has failed.
    put(&mut out, "errorMessage", message.error_message.clone());
    let diagnostics = message.diagnostics.iter().map(diagnostic_to_pi);
    put(&mut out, "diagnostics", non_empty(diagnostics)?);
    put(&mut out, "durationMs", message.duration_ms);
    put(
        &mut out,
        "thinkingLevel",
        word_of(THINKING_LEVELS, message.thinking_level),
    );
    with_extra(
        out,
        &message.extra_json,
        "AssistantMessage",
        &KEYS.assistant,
    )
}

/// A context as its pi-JSON object.
///
/// # Errors
/// As [`message_to_pi`].
pub fn context_to_pi(context: &AgentContext) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    put(&mut out, "systemPrompt", context.system_prompt.clone());
    let messages = context.messages.iter().map(message_to_pi);
    out.insert("messages".to_owned(), objects(messages)?);
    put(
        &mut out,
        "tools",
        non_empty(context.tools.iter().map(tool_to_pi))?,
    );
    with_extra(out, &context.extra_json, "AgentContext", &KEYS.context)
}

/// Write an optional key: `None` leaves it out.
pub(super) fn put<T: Into<Value>>(out: &mut JsonObject, key: &str, value: Option<T>) {
    if let Some(value) = value {
        out.insert(key.to_owned(), value.into());
    }
}

/// The objects as a JSON list.
fn objects(items: impl Iterator<Item = Result<JsonObject>>) -> Result<Value> {
    items
        .map(|item| item.map(Value::Object))
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

/// The objects as a JSON list, or `None` for none: a key the writer leaves out when empty.
fn non_empty(items: impl ExactSizeIterator<Item = Result<JsonObject>>) -> Result<Option<Value>> {
    if items.len() == 0 {
        Ok(None)
    } else {
        objects(items).map(Some)
    }
}

pub(super) fn system_to_pi(message: &SystemMessage) -> Result<JsonObject> {
    let content = match message.content.as_slice() {
        [only] if message.string_content => Value::String(only.text.clone()),
        blocks => objects(blocks.iter().map(text_to_pi))?,
    };
    let mut out = JsonObject::new();
    out.insert("role".to_owned(), "system".into());
    out.insert("content".to_owned(), content);
    put(&mut out, "sections", sections_to_pi(&message.sections)?);
    // Before the tools, as pi's agent loop writes them.
    put(&mut out, "timestamp", message.timestamp);
    put(
        &mut out,
        "toolsAdded",
        non_empty(message.tools_added.iter().map(tool_to_pi))?,
    );
    let removed = message.tools_removed.iter().map(tool_reference_to_pi);
    put(&mut out, "toolsRemoved", non_empty(removed)?);
    with_extra(out, &message.extra_json, "SystemMessage", &KEYS.system)
}

fn user_to_pi(message: &UserMessage) -> Result<JsonObject> {
    let blocks = message.content.as_slice();
    let content = match blocks {
        [only] if message.string_content => match &only.block {
            Some(user_content::Block::Text(text)) => Some(Value::String(text.text.clone())),
            _ => None,
        },
        _ => None,
    };
    let content = match content {
        Some(text) => text,
        None => objects(blocks.iter().map(|item| {
            media_block_to_pi(match &item.block {
                Some(user_content::Block::Text(text)) => Some(MediaRef::Text(text)),
                Some(user_content::Block::Image(image)) => Some(MediaRef::Image(image)),
                None => None,
            })
        }))?,
    };
    let mut out = JsonObject::new();
    out.insert("role".to_owned(), "user".into());
    out.insert("content".to_owned(), content);
    put(&mut out, "timestamp", message.timestamp);
    with_extra(out, &message.extra_json, "UserMessage", &KEYS.user)
}

fn tool_result_to_pi(message: &ToolResultMessage) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("role".to_owned(), "toolResult".into());
    out.insert("toolCallId".to_owned(), message.tool_call_id.clone().into());
    put(&mut out, "toolName", message.tool_name.clone());
    let content = message.content.iter().map(|item| {
        media_block_to_pi(match &item.block {
            Some(tool_result_content::Block::Text(text)) => Some(MediaRef::Text(text)),
            Some(tool_result_content::Block::Image(image)) => Some(MediaRef::Image(image)),
            None => None,
        })
    });
    out.insert("content".to_owned(), objects(content)?);
    let details = message.details_json.as_deref();
    put(
        &mut out,
        "details",
        details
            .map(|text| json_value(text, "ToolResultMessage.details_json"))
            .transpose()?,
    );
    put(
        &mut out,
        "usage",
        message.usage.as_ref().map(usage_to_pi).transpose()?,
    );
    let nested = message.nested_calls.as_ref().map(nested_calls_to_pi);
    put(&mut out, "nestedCalls", nested.transpose()?);
    put(&mut out, "isError", message.is_error);
    put(&mut out, "durationMs", message.duration_ms);
    put(&mut out, "timestamp", message.timestamp);
    with_extra(
        out,
        &message.extra_json,
        "ToolResultMessage",
        &KEYS.tool_result,
    )
}

pub(super) fn assistant_block_to_pi(content: &AssistantContent) -> Result<JsonObject> {
    match &content.block {
        Some(assistant_content::Block::Text(text)) => text_to_pi(text),
        Some(assistant_content::Block::Thinking(thinking)) => {
            let mut out = JsonObject::new();
            out.insert("type".to_owned(), "thinking".into());
            out.insert("thinking".to_owned(), thinking.thinking.clone().into());
            put(
                &mut out,
                "thinkingSignature",
                thinking.thinking_signature.clone(),
            );
            put(&mut out, "redacted", thinking.redacted);
            with_extra(out, &thinking.extra_json, "ThinkingContent", &KEYS.thinking)
        }
        Some(assistant_content::Block::ToolCall(call)) => {
            let mut out = JsonObject::new();
            out.insert("type".to_owned(), "toolCall".into());
            out.insert("id".to_owned(), call.id.clone().into());
            out.insert("name".to_owned(), call.name.clone().into());
            let arguments = call.arguments_json.as_deref();
            put(
                &mut out,
                "arguments",
                arguments
                    .map(|text| json_value(text, "ToolCall.arguments_json"))
                    .transpose()?,
            );
            put(&mut out, "rawArguments", call.raw_arguments.clone());
            put(&mut out, "thoughtSignature", call.thought_signature.clone());
            put(&mut out, "namespace", call.namespace.clone());
            put(&mut out, "argumentsError", call.arguments_error.clone());
            with_extra(out, &call.extra_json, "ToolCall", &KEYS.tool_call)
        }
        None => Err(PiJsonError::new("AssistantContent", "no block is set")),
    }
}

/// A block of a user message or a tool result, as the message holds it.
pub(super) enum MediaRef<'a> {
    Text(&'a TextContent),
    Image(&'a ImageContent),
}

pub(super) fn media_block_to_pi(block: Option<MediaRef<'_>>) -> Result<JsonObject> {
    match block {
        Some(MediaRef::Text(text)) => text_to_pi(text),
        Some(MediaRef::Image(image)) => {
            let mut out = JsonObject::new();
            out.insert("type".to_owned(), "image".into());
            out.insert("data".to_owned(), BASE64.encode(&image.data).into());
            out.insert("mimeType".to_owned(), image.mime_type.clone().into());
            with_extra(out, &image.extra_json, "ImageContent", &KEYS.image)
        }
        None => Err(PiJsonError::new("content", "no block is set")),
    }
}

fn text_to_pi(block: &TextContent) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("type".to_owned(), "text".into());
    out.insert("text".to_owned(), block.text.clone().into());
    put(&mut out, "textSignature", block.text_signature.clone());
    with_extra(out, &block.extra_json, "TextContent", &KEYS.text)
}

pub(super) fn usage_to_pi(usage: &Usage) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    put(&mut out, "input", usage.input);
    put(&mut out, "output", usage.output);
    put(&mut out, "cacheRead", usage.cache_read);
    put(&mut out, "cacheWrite", usage.cache_write);
    put(&mut out, "reasoning", usage.reasoning);
    put(&mut out, "totalTokens", usage.total_tokens);
    put(
        &mut out,
        "cost",
        usage.cost.as_ref().map(cost_to_pi).transpose()?,
    );
    put(&mut out, "cacheWrite1h", usage.cache_write_1h);
    with_extra(out, &usage.extra_json, "Usage", &KEYS.usage)
}

fn cost_to_pi(cost: &Cost) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    // A double is written as JavaScript writes it: 1 for 1.0, 0 for -0.0.
    put(&mut out, "input", cost.input);
    put(&mut out, "output", cost.output);
    put(&mut out, "cacheRead", cost.cache_read);
    put(&mut out, "cacheWrite", cost.cache_write);
    put(&mut out, "total", cost.total);
    put(&mut out, "totalFromProvider", cost.total_from_provider);
    with_extra(out, &cost.extra_json, "Cost", &KEYS.cost)
}

fn tool_to_pi(tool: &Tool) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("name".to_owned(), tool.name.clone().into());
    put(&mut out, "description", tool.description.clone());
    let parameters = tool.parameters_json.as_deref();
    put(
        &mut out,
        "parameters",
        parameters
            .map(|text| json_value(text, "Tool.parameters_json"))
            .transpose()?,
    );
    let sampling = tool
        .constrained_sampling
        .as_ref()
        .map(constrained_sampling_to_pi);
    put(&mut out, "constrainedSampling", sampling.transpose()?);
    with_extra(out, &tool.extra_json, "Tool", &KEYS.tool)
}

fn tool_reference_to_pi(reference: &ToolReference) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("name".to_owned(), reference.name.clone().into());
    with_extra(
        out,
        &reference.extra_json,
        "ToolReference",
        &KEYS.tool_reference,
    )
}

/// pi's `sections` object; `None` for no sections, which pi leaves out.
fn sections_to_pi(sections: &[SystemSection]) -> Result<Option<JsonObject>> {
    let mut out = JsonObject::new();
    for (index, section) in sections.iter().enumerate() {
        if out.contains_key(&section.name) {
            let path = format!("SystemMessage.sections[{index}].name");
            let detail = format!(
                "{:?} is named twice, and pi's sections are an object",
                section.name
            );
            return Err(PiJsonError::new(path, detail));
        }
        let text = section.text.clone().map_or(Value::Null, Value::String);
        out.insert(section.name.clone(), text);
    }
    Ok((!out.is_empty()).then_some(out))
}

fn constrained_sampling_to_pi(sampling: &ConstrainedSampling) -> Result<Value> {
    match &sampling.config {
        Some(Config::Off(_)) => Ok(Value::Bool(false)),
        Some(Config::JsonSchema(schema)) => {
            let mut out = JsonObject::new();
            out.insert("type".to_owned(), "json_schema".into());
            let strict = name(STRICTNESS, schema.strict, "JsonSchemaSampling.strict")?;
            out.insert("strict".to_owned(), strict.into());
            with_extra(
                out,
                &schema.extra_json,
                "JsonSchemaSampling",
                &KEYS.json_schema,
            )
            .map(Value::Object)
        }
        Some(Config::Grammar(grammar)) => {
            let mut variants = JsonObject::new();
            put(&mut variants, "openai_lark", grammar.openai_lark.clone());
            put(&mut variants, "openai_regex", grammar.openai_regex.clone());
            let where_ = "GrammarSampling.variants";
            let variants = with_extra(
                variants,
                &grammar.variants_extra_json,
                where_,
                &KEYS.variants,
            )?;
            let mut out = JsonObject::new();
            out.insert("type".to_owned(), "grammar".into());
            out.insert("variants".to_owned(), Value::Object(variants));
            with_extra(out, &grammar.extra_json, "GrammarSampling", &KEYS.grammar)
                .map(Value::Object)
        }
        None => Err(PiJsonError::new("ConstrainedSampling", "no choice is set")),
    }
}

fn diagnostic_to_pi(diagnostic: &Diagnostic) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("type".to_owned(), diagnostic.r#type.clone().into());
    out.insert("timestamp".to_owned(), diagnostic.timestamp.into());
    put(
        &mut out,
        "error",
        diagnostic
            .error
            .as_ref()
            .map(diagnostic_error_to_pi)
            .transpose()?,
    );
    let details = diagnostic.details_json.as_deref();
    put(
        &mut out,
        "details",
        details
            .map(|text| json_value(text, "Diagnostic.details_json"))
            .transpose()?,
    );
    with_extra(out, &diagnostic.extra_json, "Diagnostic", &KEYS.diagnostic)
}

fn diagnostic_error_to_pi(error: &DiagnosticError) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    put(&mut out, "name", error.name.clone());
    out.insert("message".to_owned(), error.message.clone().into());
    put(&mut out, "stack", error.stack.clone());
    let code = match &error.code {
        Some(Code::CodeText(text)) => Some(Value::String(text.clone())),
        Some(Code::CodeNumber(number)) => Some(Value::from(*number)),
        None => None,
    };
    put(&mut out, "code", code);
    with_extra(
        out,
        &error.extra_json,
        "DiagnosticError",
        &KEYS.diagnostic_error,
    )
}

fn deferred_to_pi(handle: &DeferredHandle) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("provider".to_owned(), handle.provider.clone().into());
    out.insert("modelId".to_owned(), handle.model_id.clone().into());
    out.insert("api".to_owned(), handle.api.clone().into());
    out.insert("id".to_owned(), handle.id.clone().into());
    put(&mut out, "expiresAt", handle.expires_at);
    put(&mut out, "pollAfterMs", handle.poll_after_ms);
    let data = handle.data_json.as_deref();
    put(
        &mut out,
        "data",
        data.map(|text| json_value(text, "DeferredHandle.data_json"))
            .transpose()?,
    );
    with_extra(out, &handle.extra_json, "DeferredHandle", &KEYS.deferred)
}

fn nested_calls_to_pi(nested: &NestedToolCalls) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert(
        "calls".to_owned(),
        objects(nested.calls.iter().map(nested_call_to_pi))?,
    );
    out.insert("complete".to_owned(), nested.complete.into());
    with_extra(
        out,
        &nested.extra_json,
        "NestedToolCalls",
        &KEYS.nested_calls,
    )
}

fn nested_call_to_pi(call: &NestedToolCall) -> Result<JsonObject> {
    let mut out = JsonObject::new();
    out.insert("id".to_owned(), call.id.clone().into());
    out.insert("name".to_owned(), call.name.clone().into());
    let arguments = call.arguments_json.as_deref();
    put(
        &mut out,
        "arguments",
        arguments
            .map(|text| json_value(text, "NestedToolCall.arguments_json"))
            .transpose()?,
    );
    put(&mut out, "argumentsBytes", call.arguments_bytes);
    let status = name(NESTED_CALL_STATUSES, call.status, "NestedToolCall.status")?;
    out.insert("status".to_owned(), status.into());
    put(&mut out, "durationMs", call.duration_ms);
    put(&mut out, "error", call.error.clone());
    with_extra(out, &call.extra_json, "NestedToolCall", &KEYS.nested_call)
}

/// pi's word for an enum value the object must have set.
pub(super) fn name<E: Copy + Into<i32>>(
    words: &Words<E>,
    number: i32,
    at: &str,
) -> Result<&'static str> {
    word_of(words, number).ok_or_else(|| {
        PiJsonError::new(
            at,
            format!("must be one of {}, got {number}", listed(words)),
        )
    })
}

/// `out` with the object's extras, in the order it had its keys (`keys`, the writer's, unless
/// its extras list them). A key the fields wrote wins over the same key in the extras, which
/// only an empty list or object may be (`Reader::omitted_when_empty`).
pub(super) fn with_extra(
    mut out: JsonObject,
    extra_json: &str,
    where_: &str,
    keys: &[String],
) -> Result<JsonObject> {
    if extra_json.is_empty() {
        return Ok(in_order(out, keys));
    }
    let text_at = at(where_, "extra_json");
    let mut extra = json_object(extra_json, &text_at)?;
    let listed = extra
        .shift_remove(ORDER_KEY)
        .map(|order| key_list(order, &text_at))
        .transpose()?;
    for (key, value) in extra {
        out.entry(key).or_insert(value);
    }
    Ok(in_order(out, listed.as_deref().unwrap_or(keys)))
}

fn key_list(value: Value, at: &str) -> Result<Vec<String>> {
    let refused = || PiJsonError::new(at, format!("{ORDER_KEY} is a list of keys"));
    let Value::Array(keys) = value else {
        return Err(refused());
    };
    keys.into_iter()
        .map(|key| match key {
            Value::String(key) => Ok(key),
            _ => Err(refused()),
        })
        .collect()
}

/// The value of a `*_json` field's text.
pub(super) fn json_value(text: &str, at: &str) -> Result<Value> {
    parse_field_json(text).map_err(|error| PiJsonError::new(at, format!("not valid JSON: {error}")))
}

/// The object of a `*_json` field's text.
pub(super) fn json_object(text: &str, at: &str) -> Result<JsonObject> {
    match json_value(text, at)? {
        Value::Object(obj) => Ok(obj),
        other => Err(PiJsonError::new(
            at,
            format!("expected a JSON object, got {}", type_name(&other)),
        )),
    }
}
