//! Reading pi-JSON messages and contexts into the pi.ai.v1 messages.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Number, Value};

use super::keys::KEYS;
use super::names::{NESTED_CALL_STATUSES, STOP_REASONS, STRICTNESS, THINKING_LEVELS};
use super::reader::{Empty, Reader, describe, expected_object, list};
use super::{PiJsonError, Result, at};
use crate::js_json::{JsonObject, field_json};
use crate::v1::agent_message::Role;
use crate::v1::constrained_sampling::Config;
use crate::v1::diagnostic_error::Code;
use crate::v1::{
    AgentContext, AgentMessage, AssistantContent, AssistantMessage, ConstrainedSampling, Cost,
    CustomMessage, DeferredHandle, Diagnostic, DiagnosticError, GrammarSampling, ImageContent,
    JsonSchemaSampling, NestedToolCall, NestedToolCalls, SystemMessage, SystemSection, TextContent,
    ThinkingContent, Tool, ToolCall, ToolReference, ToolResultContent, ToolResultMessage, Usage,
    UserContent, UserMessage, assistant_content, tool_result_content, user_content,
};

/// A JSON number JavaScript reads exactly has a magnitude below this when it is an integer.
const SAFE_LIMIT: f64 = 9_007_199_254_740_992.0;

/// One pi-JSON message: system, user, assistant, toolResult, or any other role, kept as it is
/// in a `CustomMessage`. `at` is the path of `value` for errors (`"message"`, or `""`).
///
/// # Errors
/// A [`PiJsonError`] naming the bad value's path.
pub fn message_from_pi(value: &Value, at: &str) -> Result<AgentMessage> {
    let Value::Object(obj) = value else {
        return Err(expected_object(value, at));
    };
    let role = match obj.get("role") {
        Some(Value::String(role)) if !role.is_empty() => role.as_str(),
        other => {
            let detail = format!(
                "expected a role such as 'system', 'user', 'assistant' or 'toolResult', got {}",
                describe(other)
            );
            return Err(PiJsonError::new(self::at(at, "role"), detail));
        }
    };
    let role = match role {
        "user" => Role::User(user_from_pi(value, at)?),
        "assistant" => Role::Assistant(assistant_from_pi(value, at)?),
        "toolResult" => Role::ToolResult(tool_result_from_pi(value, at)?),
        "system" => Role::System(system_from_pi(value, at)?),
        custom => {
            let fields: JsonObject = obj
                .iter()
                .filter(|(key, _)| *key != "role")
                .map(|(key, item)| (key.clone(), item.clone()))
                .collect();
            Role::Custom(CustomMessage {
                role: custom.to_owned(),
                fields_json: field_json(&Value::Object(fields)),
            })
        }
    };
    Ok(AgentMessage { role: Some(role) })
}

/// One pi-JSON assistant message (a message, or the `partial` or final message of an event).
///
/// # Errors
/// A [`PiJsonError`] naming the bad value's path.
pub fn assistant_from_pi(value: &Value, at: &str) -> Result<AssistantMessage> {
    let mut read = Reader::new(value, at, &KEYS.assistant)?;
    read.string("role")?;
    Ok(AssistantMessage {
        content: read.items("content", |item, at| {
            let block = assistant_block(item, at)?;
            Ok(AssistantContent { block: Some(block) })
        })?,
        api: read.optional_string("api")?,
        provider: read.optional_string("provider")?,
        model: read.optional_string("model")?,
        usage: read.child("usage", usage)?,
        // Absent only on a partial from an older pi, still streaming; written only when set.
        stop_reason: read
            .optional_choice("stopReason", STOP_REASONS)?
            .map_or(0, Into::into),
        deferred: read.child("deferred", deferred)?,
        timestamp: read.optional_integer("timestamp")?,
        provider_thinking_level: read.optional_string("providerThinkingLevel")?,
        response_id: read.optional_string("responseId")?,
        response_model: read.optional_string("responseModel")?,
        raw_stop_reason: read.optional_string("rawStopReason")?,
        end_turn: read.optional_boolean("endTurn")?,
        error_message: read.optional_string("errorMessage")?,
        diagnostics: read.omitted_when_empty("diagnostics", Empty::List, diagnostics)?,
        duration_ms: read.optional_integer("durationMs")?,
        thinking_level: read
            .optional_choice("thinkingLevel", THINKING_LEVELS)?
            .map_or(0, Into::into),
        extra_json: read.extra_json(),
    })
}

/// A pi-JSON context: pi's `Context` (`systemPrompt`, `messages`, `tools`) or its transcript
/// context (`messages` only, the prompt and tools in system messages), kept as given.
///
/// # Errors
/// A [`PiJsonError`] naming the bad value's path.
pub fn context_from_pi(value: &Value, at: &str) -> Result<AgentContext> {
    let mut read = Reader::new(value, at, &KEYS.context)?;
    Ok(AgentContext {
        system_prompt: read.optional_string("systemPrompt")?,
        messages: read.items("messages", message_from_pi)?,
        tools: read.omitted_when_empty("tools", Empty::List, tools)?,
        extra_json: read.extra_json(),
    })
}

pub(super) fn system_from_pi(value: &Value, at: &str) -> Result<SystemMessage> {
    let mut read = Reader::new(value, at, &KEYS.system)?;
    read.string("role")?;
    let (content, string_content) = match read.get("content") {
        Some(Value::String(text)) => (vec![plain_text(text)], true),
        _ => (read.items("content", system_block)?, false),
    };
    Ok(SystemMessage {
        content,
        string_content,
        sections: read.omitted_when_empty("sections", Empty::Object, sections)?,
        tools_added: read.omitted_when_empty("toolsAdded", Empty::List, tools)?,
        tools_removed: read.omitted_when_empty("toolsRemoved", Empty::List, tool_references)?,
        timestamp: read.optional_integer("timestamp")?,
        extra_json: read.extra_json(),
    })
}

fn user_from_pi(value: &Value, at: &str) -> Result<UserMessage> {
    let read = Reader::new(value, at, &KEYS.user)?;
    read.string("role")?;
    let (content, string_content) = match read.get("content") {
        Some(Value::String(text)) => (vec![user_block(Media::Text(plain_text(text)))], true),
        _ => (
            read.items("content", |item, at| media_block(item, at).map(user_block))?,
            false,
        ),
    };
    Ok(UserMessage {
        content,
        timestamp: read.optional_integer("timestamp")?,
        string_content,
        extra_json: read.extra_json(),
    })
}

fn tool_result_from_pi(value: &Value, at: &str) -> Result<ToolResultMessage> {
    let read = Reader::new(value, at, &KEYS.tool_result)?;
    read.string("role")?;
    Ok(ToolResultMessage {
        tool_call_id: read.string("toolCallId")?,
        tool_name: read.optional_string("toolName")?,
        content: read.items("content", |item, at| {
            media_block(item, at).map(tool_result_block)
        })?,
        details_json: read.json_text("details", false)?,
        usage: read.child("usage", usage)?,
        nested_calls: read.child("nestedCalls", nested_calls)?,
        is_error: read.optional_boolean("isError")?,
        duration_ms: read.optional_integer("durationMs")?,
        timestamp: read.optional_integer("timestamp")?,
        extra_json: read.extra_json(),
    })
}

/// The `type` of a content block, which must be an object.
fn block_type<'a>(value: &'a Value, at: &str) -> Result<Option<&'a Value>> {
    match value {
        Value::Object(obj) => Ok(obj.get("type")),
        _ => Err(expected_object(value, at)),
    }
}

fn wrong_type(at: &str, expected: &str, kind: Option<&Value>) -> PiJsonError {
    let detail = format!("{expected}, got {}", describe(kind));
    PiJsonError::new(self::at(at, "type"), detail)
}

pub(super) fn assistant_block(value: &Value, at: &str) -> Result<assistant_content::Block> {
    let kind = block_type(value, at)?;
    Ok(match kind.and_then(Value::as_str) {
        Some("text") => assistant_content::Block::Text(text(value, at)?),
        Some("thinking") => {
            let read = Reader::new(value, at, &KEYS.thinking)?;
            read.string("type")?;
            assistant_content::Block::Thinking(ThinkingContent {
                thinking: read.string("thinking")?,
                thinking_signature: read.optional_string("thinkingSignature")?,
                redacted: read.optional_boolean("redacted")?,
                extra_json: read.extra_json(),
            })
        }
        Some("toolCall") => {
            let read = Reader::new(value, at, &KEYS.tool_call)?;
            read.string("type")?;
            assistant_content::Block::ToolCall(ToolCall {
                id: read.string("id")?,
                name: read.string("name")?,
                arguments_json: read.json_text("arguments", true)?,
                raw_arguments: read.optional_string("rawArguments")?,
                thought_signature: read.optional_string("thoughtSignature")?,
                namespace: read.optional_string("namespace")?,
                arguments_error: read.optional_string("argumentsError")?,
                extra_json: read.extra_json(),
            })
        }
        _ => {
            let expected = "an assistant block is 'text', 'thinking' or 'toolCall'";
            return Err(wrong_type(at, expected, kind));
        }
    })
}

fn system_block(value: &Value, at: &str) -> Result<TextContent> {
    let kind = block_type(value, at)?;
    if kind.and_then(Value::as_str) != Some("text") {
        return Err(wrong_type(at, "a system message's block is 'text'", kind));
    }
    text(value, at)
}

/// A block of a user message or a tool result: text or an image.
pub(super) enum Media {
    Text(TextContent),
    Image(ImageContent),
}

pub(super) fn media_block(value: &Value, at: &str) -> Result<Media> {
    let kind = block_type(value, at)?;
    match kind.and_then(Value::as_str) {
        Some("text") => Ok(Media::Text(text(value, at)?)),
        Some("image") => image_block(value, at).map(Media::Image),
        _ => Err(wrong_type(at, "expected 'text' or 'image'", kind)),
    }
}

/// An image block: its data must be canonical base64, as anything else would be written back
/// changed.
pub(super) fn image_block(value: &Value, at: &str) -> Result<ImageContent> {
    let read = Reader::new(value, at, &KEYS.image)?;
    read.string("type")?;
    let encoded = read.string("data")?;
    let data = BASE64.decode(&encoded).map_err(|error| {
        PiJsonError::new(read.path("data"), format!("not valid base64: {error}"))
    })?;
    if BASE64.encode(&data) != encoded {
        let detail = "not canonical base64 (padded, standard alphabet), so it would change";
        return Err(PiJsonError::new(read.path("data"), detail));
    }
    Ok(ImageContent {
        data,
        mime_type: read.string("mimeType")?,
        extra_json: read.extra_json(),
    })
}

fn text(value: &Value, at: &str) -> Result<TextContent> {
    let read = Reader::new(value, at, &KEYS.text)?;
    read.string("type")?;
    Ok(TextContent {
        text: read.string("text")?,
        text_signature: read.optional_string("textSignature")?,
        extra_json: read.extra_json(),
    })
}

/// The one text block of content given as a plain string.
pub(super) fn plain_text(text: &str) -> TextContent {
    TextContent {
        text: text.to_owned(),
        ..TextContent::default()
    }
}

pub(super) fn user_block(block: Media) -> UserContent {
    let block = match block {
        Media::Text(text) => user_content::Block::Text(text),
        Media::Image(image) => user_content::Block::Image(image),
    };
    UserContent { block: Some(block) }
}

fn tool_result_block(block: Media) -> ToolResultContent {
    let block = match block {
        Media::Text(text) => tool_result_content::Block::Text(text),
        Media::Image(image) => tool_result_content::Block::Image(image),
    };
    ToolResultContent { block: Some(block) }
}

pub(super) fn usage(value: &Value, at: &str) -> Result<Usage> {
    let read = Reader::new(value, at, &KEYS.usage)?;
    Ok(Usage {
        input: read.optional_integer("input")?,
        output: read.optional_integer("output")?,
        cache_read: read.optional_integer("cacheRead")?,
        cache_write: read.optional_integer("cacheWrite")?,
        // Absent is not 0: the provider did not say.
        reasoning: read.optional_integer("reasoning")?,
        total_tokens: read.optional_integer("totalTokens")?,
        cost: read.child("cost", cost)?,
        cache_write_1h: read.optional_integer("cacheWrite1h")?,
        extra_json: read.extra_json(),
    })
}

fn cost(value: &Value, at: &str) -> Result<Cost> {
    let read = Reader::new(value, at, &KEYS.cost)?;
    Ok(Cost {
        input: read.optional_number("input")?,
        output: read.optional_number("output")?,
        cache_read: read.optional_number("cacheRead")?,
        cache_write: read.optional_number("cacheWrite")?,
        total: read.optional_number("total")?,
        total_from_provider: read.optional_boolean("totalFromProvider")?,
        extra_json: read.extra_json(),
    })
}

fn tool(value: &Value, at: &str) -> Result<Tool> {
    let read = Reader::new(value, at, &KEYS.tool)?;
    Ok(Tool {
        name: read.string("name")?,
        description: read.optional_string("description")?,
        parameters_json: read.json_text("parameters", true)?,
        constrained_sampling: read.child("constrainedSampling", constrained_sampling)?,
        extra_json: read.extra_json(),
    })
}

fn tools(value: &Value, at: &str) -> Result<Vec<Tool>> {
    list(Some(value), at, tool)
}

fn tool_references(value: &Value, at: &str) -> Result<Vec<ToolReference>> {
    list(Some(value), at, |value, at| {
        let read = Reader::new(value, at, &KEYS.tool_reference)?;
        Ok(ToolReference {
            name: read.string("name")?,
            extra_json: read.extra_json(),
        })
    })
}

/// pi's `sections` object, in its order; a section set to null (removed) has no text.
fn sections(value: &Value, at: &str) -> Result<Vec<SystemSection>> {
    let Value::Object(obj) = value else {
        let detail = format!("expected an object, got {}", describe(Some(value)));
        return Err(PiJsonError::new(at, detail));
    };
    obj.iter()
        .map(|(name, text)| {
            let text = match text {
                Value::Null => None,
                Value::String(text) => Some(text.clone()),
                other => {
                    let detail =
                        format!("expected a string or null, got {}", describe(Some(other)));
                    return Err(PiJsonError::new(self::at(at, name), detail));
                }
            };
            Ok(SystemSection {
                name: name.clone(),
                text,
            })
        })
        .collect()
}

/// pi's `false | {type: "json_schema", strict} | {type: "grammar", variants}`.
fn constrained_sampling(value: &Value, at: &str) -> Result<ConstrainedSampling> {
    let obj = match value {
        Value::Bool(false) => {
            return Ok(ConstrainedSampling {
                config: Some(Config::Off(true)),
            });
        }
        Value::Object(obj) => obj,
        other => {
            let detail = format!("expected false or an object, got {}", describe(Some(other)));
            return Err(PiJsonError::new(at, detail));
        }
    };
    let kind = obj.get("type");
    let config = match kind.and_then(Value::as_str) {
        Some("json_schema") => {
            let read = Reader::new(value, at, &KEYS.json_schema)?;
            let strict = read.choice("strict", STRICTNESS)?;
            Config::JsonSchema(JsonSchemaSampling {
                strict: strict.into(),
                extra_json: read.extra_json(),
            })
        }
        Some("grammar") => {
            let read = Reader::new(value, at, &KEYS.grammar)?;
            let variants_at = read.path("variants");
            let Some(variants) = read.get("variants") else {
                let detail = "required, an object of grammars by format";
                return Err(PiJsonError::new(variants_at, detail));
            };
            let variants = Reader::new(variants, &variants_at, &KEYS.variants)?;
            Config::Grammar(GrammarSampling {
                openai_lark: variants.optional_string("openai_lark")?,
                openai_regex: variants.optional_string("openai_regex")?,
                variants_extra_json: variants.extra_json(),
                extra_json: read.extra_json(),
            })
        }
        _ => return Err(wrong_type(at, "expected 'json_schema' or 'grammar'", kind)),
    };
    Ok(ConstrainedSampling {
        config: Some(config),
    })
}

fn diagnostics(value: &Value, at: &str) -> Result<Vec<Diagnostic>> {
    list(Some(value), at, diagnostic)
}

fn diagnostic(value: &Value, at: &str) -> Result<Diagnostic> {
    let read = Reader::new(value, at, &KEYS.diagnostic)?;
    Ok(Diagnostic {
        r#type: read.string("type")?,
        timestamp: read.integer("timestamp")?,
        error: read.child("error", diagnostic_error)?,
        details_json: read.json_text("details", true)?,
        extra_json: read.extra_json(),
    })
}

fn diagnostic_error(value: &Value, at: &str) -> Result<DiagnosticError> {
    let read = Reader::new(value, at, &KEYS.diagnostic_error)?;
    let name = read.optional_string("name")?;
    let message = read.string("message")?;
    let stack = read.optional_string("stack")?;
    let code = match read.get("code") {
        None => None,
        Some(Value::String(code)) => Some(Code::CodeText(code.clone())),
        Some(Value::Number(number)) if exact_in_javascript(number) => {
            number.as_f64().map(Code::CodeNumber)
        }
        Some(_) => {
            return Err(read.fail(
                "code",
                "a string or a number (a safe integer when integral)",
            ));
        }
    };
    Ok(DiagnosticError {
        name,
        message,
        stack,
        code,
        extra_json: read.extra_json(),
    })
}

/// Whether JavaScript reads this JSON number exactly: finite, and a safe integer if integral.
fn exact_in_javascript(number: &Number) -> bool {
    let Some(double) = number.as_f64() else {
        return false;
    };
    if number.is_i64() || number.is_u64() {
        return double.abs() < SAFE_LIMIT;
    }
    double.is_finite() && !(double.fract() == 0.0 && double.abs() >= SAFE_LIMIT)
}

fn deferred(value: &Value, at: &str) -> Result<DeferredHandle> {
    let read = Reader::new(value, at, &KEYS.deferred)?;
    Ok(DeferredHandle {
        provider: read.string("provider")?,
        model_id: read.string("modelId")?,
        api: read.string("api")?,
        id: read.string("id")?,
        expires_at: read.optional_integer("expiresAt")?,
        poll_after_ms: read.optional_integer("pollAfterMs")?,
        data_json: read.json_text("data", false)?,
        extra_json: read.extra_json(),
    })
}

fn nested_calls(value: &Value, at: &str) -> Result<NestedToolCalls> {
    let read = Reader::new(value, at, &KEYS.nested_calls)?;
    Ok(NestedToolCalls {
        calls: read.items("calls", nested_call)?,
        complete: read.boolean("complete")?,
        extra_json: read.extra_json(),
    })
}

fn nested_call(value: &Value, at: &str) -> Result<NestedToolCall> {
    let read = Reader::new(value, at, &KEYS.nested_call)?;
    Ok(NestedToolCall {
        id: read.string("id")?,
        name: read.string("name")?,
        arguments_json: read.json_text("arguments", true)?,
        arguments_bytes: read.optional_integer("argumentsBytes")?,
        status: read.choice("status", NESTED_CALL_STATUSES)?.into(),
        duration_ms: read.optional_integer("durationMs")?,
        error: read.optional_string("error")?,
        extra_json: read.extra_json(),
    })
}
