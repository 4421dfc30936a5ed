//! The lines of a pi session file, typed: a message entry, the header, and every entry type
//! pi-coding-agent defines (a model change, a compaction, a label, ...), with each line's `id`,
//! `parentId` and `timestamp` on its `TranscriptEntry`, so the session's tree can be walked.
//!
//! An entry of a type that has no body here keeps its keys in `SessionEntry::fields_json`. Each
//! type's keys are written in the order pi's session manager writes them, which the schema gives
//! as the `modelled_keys` of the body's `extra_json` (so the writer has no table of its own).
//! A new entry type is a row of `BODIES`, its reader, and its arm in `body_to_pi`.
//!
//! A whole file is read by [`session_from_pi`], one entry a line: a line that is not one JSON
//! entry (a blank line, text that is not JSON, JSON that is not an object, two entries run
//! together) is kept byte for byte as an `unparsed_line`, named in a [`SessionWarning`], and
//! [`session_to_pi`] writes it back as it was. pi's own loader skips such a line; refusing the file
//! would lose the rest of it.

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

use serde_json::Value;

use super::from_pi::{
    Media, assistant_block, image_block, media_block, message_from_pi, plain_text, system_from_pi,
    usage, user_block,
};
use super::keys::modelled_keys;
use super::reader::{Reader, expected_object, type_name};
use super::to_pi::{
    MediaRef, assistant_block_to_pi, json_value, media_block_to_pi, message_to_pi, put,
    system_to_pi, usage_to_pi, with_extra,
};
use super::{PiJsonError, Result, at};
use crate::js_json::{JsonObject, dump_json, load_json};
use crate::null_value::NullValue;
use crate::v1::session_entry::Body;
use crate::v1::transcript_entry::{Entry, Parent};
use crate::v1::{
    AssistantContent, BranchSummary, Compaction, ContentBlock, ContextEdit, ContextReplacement,
    CustomEntry, CustomMessageEntry, Label, ModelChange, SessionEntry, SessionHeader, SessionInfo,
    ThinkingLevelChange, TranscriptEntry, UsageRecord, assistant_content, content_block,
    user_content,
};

/// Reads the body of an entry of one type, the line's place already read.
type ReadBody = fn(Reader<'_>) -> Result<Body>;

/// The typed entry types: pi's type, the body's message in the schema, and its reader.
const BODIES: [(&str, &str, ReadBody); 11] = [
    ("session", "SessionHeader", header),
    (
        "thinking_level_change",
        "ThinkingLevelChange",
        thinking_level_change,
    ),
    ("model_change", "ModelChange", model_change),
    ("usage", "UsageRecord", usage_record),
    ("compaction", "Compaction", compaction),
    ("branch_summary", "BranchSummary", branch_summary),
    ("custom", "CustomEntry", custom),
    ("custom_message", "CustomMessageEntry", custom_message),
    ("label", "Label", label),
    ("session_info", "SessionInfo", session_info),
    ("context_edit", "ContextEdit", context_edit),
];

/// What an entry of an untyped type is written with, in this order.
const BASE: [&str; 4] = ["type", "id", "parentId", "timestamp"];

/// The keys of each message a line is read into, by the message's name.
static KEYS: LazyLock<HashMap<&'static str, Vec<String>>> = LazyLock::new(|| {
    let mut keys: HashMap<_, _> = BODIES
        .iter()
        .map(|(_, message, _)| (*message, modelled_keys(message, "extra_json")))
        .collect();
    // A message entry's unmodelled keys are its session_json.
    keys.insert(
        "TranscriptEntry",
        modelled_keys("TranscriptEntry", "session_json"),
    );
    keys.insert(
        "ContextReplacement",
        modelled_keys("ContextReplacement", "extra_json"),
    );
    keys.insert("SessionEntry", BASE.map(str::to_owned).to_vec());
    keys
});

/// The keys of `message`, one of the codec's own names.
fn keys(message: &str) -> &'static [String] {
    KEYS.get(message)
        .unwrap_or_else(|| panic!("no keys for {message}"))
}

// --- reading -------------------------------------------------------------------------------------

/// One line of a pi session file, or one bare pi-JSON message. `at` is the path of `value` for
/// errors (`"entry"`, or `""`).
///
/// # Errors
/// A [`PiJsonError`] naming the bad value's path.
pub fn entry_from_pi(value: &Value, at: &str) -> Result<TranscriptEntry> {
    let Value::Object(obj) = value else {
        return Err(expected_object(value, at));
    };
    if obj.contains_key("role") {
        let message = message_from_pi(value, at)?;
        return Ok(placed(Place::default(), Entry::Message(message)));
    }
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or_default();
    if kind == "message"
        && let Some(message) = obj.get("message")
    {
        let read = Reader::new(value, at, keys("TranscriptEntry"))?;
        let message = message_from_pi(message, &self::at(at, "message"))?;
        let place = place(&read)?;
        let anchored = place.id.is_some() || place.parent.is_some() || place.timestamp.is_some();
        let mut entry = placed(place, Entry::Message(message));
        entry.session_json = match read.extra_json() {
            // "{}": a message entry with nothing but its type, told from a bare message.
            extra if extra.is_empty() && !anchored => "{}".to_owned(),
            extra => extra,
        };
        return Ok(entry);
    }
    if kind.is_empty() {
        let detail = "neither a message (no 'role') nor a session entry (no 'type')";
        return Err(PiJsonError::new(at, detail));
    }
    let body = BODIES.iter().find(|(name, _, _)| *name == kind);
    let read = Reader::new(
        value,
        at,
        keys(body.map_or("SessionEntry", |(_, message, _)| message)),
    )?;
    let place = place(&read)?;
    let session_entry = match body {
        Some((_, _, read_body)) => SessionEntry {
            r#type: kind.to_owned(),
            fields_json: String::new(),
            body: Some(read_body(read)?),
        },
        None => SessionEntry {
            r#type: kind.to_owned(),
            fields_json: read.extra_json(),
            body: None,
        },
    };
    Ok(placed(place, Entry::SessionEntry(session_entry)))
}

/// A line's place in the session's tree.
#[derive(Default)]
struct Place {
    id: Option<String>,
    parent: Option<Parent>,
    timestamp: Option<String>,
}

/// The line's id, parent and timestamp, each where its type has it.
fn place(read: &Reader<'_>) -> Result<Place> {
    read.string("type")?;
    let has = |key: &str| read.known.contains(&key);
    let parent = match read.get("parentId") {
        Some(Value::Null) if has("parentId") => Some(Parent::Root(NullValue::NullValue.into())),
        Some(_) if has("parentId") => Some(Parent::ParentId(read.string("parentId")?)),
        _ => None,
    };
    Ok(Place {
        parent,
        id: if has("id") {
            read.optional_string("id")?
        } else {
            None
        },
        timestamp: if has("timestamp") {
            read.optional_string("timestamp")?
        } else {
            None
        },
    })
}

fn placed(place: Place, entry: Entry) -> TranscriptEntry {
    TranscriptEntry {
        entry: Some(entry),
        id: place.id,
        parent: place.parent,
        timestamp: place.timestamp,
        session_json: String::new(),
    }
}

fn header(read: Reader<'_>) -> Result<Body> {
    Ok(Body::Header(SessionHeader {
        version: read.optional_integer("version")?,
        cwd: read.optional_string("cwd")?,
        parent_session: read.optional_string("parentSession")?,
        extra_json: read.extra_json(),
    }))
}

fn thinking_level_change(read: Reader<'_>) -> Result<Body> {
    Ok(Body::ThinkingLevelChange(ThinkingLevelChange {
        thinking_level: read.optional_string("thinkingLevel")?,
        extra_json: read.extra_json(),
    }))
}

fn model_change(read: Reader<'_>) -> Result<Body> {
    Ok(Body::ModelChange(ModelChange {
        provider: read.optional_string("provider")?,
        model_id: read.optional_string("modelId")?,
        extra_json: read.extra_json(),
    }))
}

fn usage_record(read: Reader<'_>) -> Result<Body> {
    Ok(Body::Usage(UsageRecord {
        kind: read.optional_string("kind")?,
        provider: read.optional_string("provider")?,
        model: read.optional_string("model")?,
        usage: read.child("usage", usage)?,
        note: read.optional_string("note")?,
        extra_json: read.extra_json(),
    }))
}

fn compaction(read: Reader<'_>) -> Result<Body> {
    Ok(Body::Compaction(Compaction {
        summary: read.optional_string("summary")?,
        first_kept_entry_id: read.optional_string("firstKeptEntryId")?,
        tokens_before: read.optional_integer("tokensBefore")?,
        details_json: read.json_text("details", false)?.unwrap_or_default(),
        usage: read.child("usage", usage)?,
        from_hook: read.optional_boolean("fromHook")?,
        system_message: read.child("systemMessage", system_from_pi)?,
        extra_json: read.extra_json(),
    }))
}

fn branch_summary(read: Reader<'_>) -> Result<Body> {
    Ok(Body::BranchSummary(BranchSummary {
        from_id: read.optional_string("fromId")?,
        summary: read.optional_string("summary")?,
        details_json: read.json_text("details", false)?.unwrap_or_default(),
        usage: read.child("usage", usage)?,
        from_hook: read.optional_boolean("fromHook")?,
        extra_json: read.extra_json(),
    }))
}

fn custom(read: Reader<'_>) -> Result<Body> {
    Ok(Body::Custom(CustomEntry {
        custom_type: read.optional_string("customType")?,
        data_json: read.json_text("data", false)?.unwrap_or_default(),
        extra_json: read.extra_json(),
    }))
}

fn custom_message(read: Reader<'_>) -> Result<Body> {
    let (content, string_content) = match read.get("content") {
        Some(Value::String(text)) => (vec![user_block(Media::Text(plain_text(text)))], true),
        _ => (
            read.items_or_none("content", |item, at| media_block(item, at).map(user_block))?,
            false,
        ),
    };
    Ok(Body::CustomMessage(CustomMessageEntry {
        custom_type: read.optional_string("customType")?,
        content,
        string_content,
        display: read.optional_boolean("display")?,
        details_json: read.json_text("details", false)?.unwrap_or_default(),
        extra_json: read.extra_json(),
    }))
}

fn label(read: Reader<'_>) -> Result<Body> {
    Ok(Body::Label(Label {
        target_id: read.optional_string("targetId")?,
        label: read.optional_string("label")?,
        extra_json: read.extra_json(),
    }))
}

fn session_info(read: Reader<'_>) -> Result<Body> {
    Ok(Body::SessionInfo(SessionInfo {
        name: read.optional_string("name")?,
        extra_json: read.extra_json(),
    }))
}

fn context_edit(read: Reader<'_>) -> Result<Body> {
    let target_id = read.optional_string("targetId")?;
    // pi's `"replacement":null` leaves the target out of the context.
    let replacement = match read.get("replacement") {
        None | Some(Value::Null) => None,
        Some(value) => Some(replacement(value, &read.path("replacement"))?),
    };
    Ok(Body::ContextEdit(ContextEdit {
        target_id,
        replacement,
        extra_json: read.extra_json(),
    }))
}

fn replacement(value: &Value, at: &str) -> Result<ContextReplacement> {
    let read = Reader::new(value, at, keys("ContextReplacement"))?;
    let (content, string_content) = match read.get("content") {
        Some(Value::String(text)) => {
            let block = content_block::Block::Text(plain_text(text));
            (vec![ContentBlock { block: Some(block) }], true)
        }
        _ => (read.items("content", any_block)?, false),
    };
    Ok(ContextReplacement {
        content,
        string_content,
        extra_json: read.extra_json(),
    })
}

/// A block of any role's content: what a context edit may put in place of a message's.
fn any_block(value: &Value, at: &str) -> Result<ContentBlock> {
    let block = if value.get("type").and_then(Value::as_str) == Some("image") {
        content_block::Block::Image(image_block(value, at)?)
    } else {
        match assistant_block(value, at)? {
            assistant_content::Block::Text(text) => content_block::Block::Text(text),
            assistant_content::Block::Thinking(thinking) => {
                content_block::Block::Thinking(thinking)
            }
            assistant_content::Block::ToolCall(call) => content_block::Block::ToolCall(call),
        }
    };
    Ok(ContentBlock { block: Some(block) })
}

// --- writing -------------------------------------------------------------------------------------

/// A transcript entry as its line: a session file's entry if it came from one, else the bare
/// message.
///
/// # Errors
/// A [`PiJsonError`] when pi-JSON cannot hold the entry (see
/// [`message_to_pi`](super::message_to_pi)).
pub fn entry_to_pi(entry: &TranscriptEntry) -> Result<JsonObject> {
    match &entry.entry {
        Some(Entry::SessionEntry(session_entry)) => {
            let mut out = place_to_pi(&session_entry.r#type, entry);
            match &session_entry.body {
                Some(body) => {
                    let (message, extra_json) = body_to_pi(&mut out, body)?;
                    with_extra(out, extra_json, message, keys(message))
                }
                None => with_extra(
                    out,
                    &session_entry.fields_json,
                    "SessionEntry",
                    keys("SessionEntry"),
                ),
            }
        }
        Some(Entry::Message(message)) => {
            let message = message_to_pi(message)?;
            let anchored =
                entry.id.is_some() || entry.parent.is_some() || entry.timestamp.is_some();
            if !anchored && entry.session_json.is_empty() {
                return Ok(message);
            }
            let mut out = place_to_pi("message", entry);
            out.insert("message".to_owned(), Value::Object(message));
            with_extra(
                out,
                &entry.session_json,
                "TranscriptEntry",
                keys("TranscriptEntry"),
            )
        }
        // No object: session_to_pi writes it as it is.
        Some(Entry::UnparsedLine(_)) => Err(PiJsonError::new(
            "TranscriptEntry.unparsed_line",
            "a line that is not one JSON entry has no object to write",
        )),
        None => Err(PiJsonError::new("TranscriptEntry", "no entry is set")),
    }
}

fn place_to_pi(kind: &str, entry: &TranscriptEntry) -> JsonObject {
    let mut out = JsonObject::new();
    out.insert("type".to_owned(), kind.into());
    put(&mut out, "id", entry.id.clone());
    let parent = entry.parent.as_ref().map(|parent| match parent {
        Parent::ParentId(id) => Value::String(id.clone()),
        Parent::Root(_) => Value::Null,
    });
    put(&mut out, "parentId", parent);
    put(&mut out, "timestamp", entry.timestamp.clone());
    out
}

/// Write a JSON-text field: empty leaves the key out.
fn put_json(out: &mut JsonObject, key: &str, text: &str, at: &str) -> Result<()> {
    if !text.is_empty() {
        out.insert(key.to_owned(), json_value(text, at)?);
    }
    Ok(())
}

/// Write a body's keys into `out`; the body's message (for its keys) and its extras.
fn body_to_pi<'a>(out: &mut JsonObject, body: &'a Body) -> Result<(&'static str, &'a str)> {
    Ok(match body {
        Body::Header(header) => {
            put(out, "version", header.version);
            put(out, "cwd", header.cwd.clone());
            put(out, "parentSession", header.parent_session.clone());
            ("SessionHeader", &header.extra_json)
        }
        Body::ThinkingLevelChange(change) => {
            put(out, "thinkingLevel", change.thinking_level.clone());
            ("ThinkingLevelChange", &change.extra_json)
        }
        Body::ModelChange(change) => {
            put(out, "provider", change.provider.clone());
            put(out, "modelId", change.model_id.clone());
            ("ModelChange", &change.extra_json)
        }
        Body::Usage(record) => {
            put(out, "kind", record.kind.clone());
            put(out, "provider", record.provider.clone());
            put(out, "model", record.model.clone());
            put(
                out,
                "usage",
                record.usage.as_ref().map(usage_to_pi).transpose()?,
            );
            put(out, "note", record.note.clone());
            ("UsageRecord", &record.extra_json)
        }
        Body::Compaction(compaction) => {
            put(out, "summary", compaction.summary.clone());
            put(
                out,
                "firstKeptEntryId",
                compaction.first_kept_entry_id.clone(),
            );
            put(out, "tokensBefore", compaction.tokens_before);
            put_json(
                out,
                "details",
                &compaction.details_json,
                "Compaction.details_json",
            )?;
            put(
                out,
                "usage",
                compaction.usage.as_ref().map(usage_to_pi).transpose()?,
            );
            put(out, "fromHook", compaction.from_hook);
            let system = compaction.system_message.as_ref().map(system_to_pi);
            put(out, "systemMessage", system.transpose()?);
            ("Compaction", &compaction.extra_json)
        }
        Body::BranchSummary(summary) => {
            put(out, "fromId", summary.from_id.clone());
            put(out, "summary", summary.summary.clone());
            put_json(
                out,
                "details",
                &summary.details_json,
                "BranchSummary.details_json",
            )?;
            put(
                out,
                "usage",
                summary.usage.as_ref().map(usage_to_pi).transpose()?,
            );
            put(out, "fromHook", summary.from_hook);
            ("BranchSummary", &summary.extra_json)
        }
        Body::Custom(custom) => {
            put(out, "customType", custom.custom_type.clone());
            put_json(out, "data", &custom.data_json, "CustomEntry.data_json")?;
            ("CustomEntry", &custom.extra_json)
        }
        Body::CustomMessage(custom) => {
            put(out, "customType", custom.custom_type.clone());
            out.insert("content".to_owned(), custom_content_to_pi(custom)?);
            put(out, "display", custom.display);
            put_json(
                out,
                "details",
                &custom.details_json,
                "CustomMessageEntry.details_json",
            )?;
            ("CustomMessageEntry", &custom.extra_json)
        }
        Body::Label(label) => {
            put(out, "targetId", label.target_id.clone());
            put(out, "label", label.label.clone());
            ("Label", &label.extra_json)
        }
        Body::SessionInfo(info) => {
            put(out, "name", info.name.clone());
            ("SessionInfo", &info.extra_json)
        }
        Body::ContextEdit(edit) => {
            put(out, "targetId", edit.target_id.clone());
            let replacement = edit
                .replacement
                .as_ref()
                .map(replacement_to_pi)
                .transpose()?;
            out.insert(
                "replacement".to_owned(),
                replacement.map_or(Value::Null, Value::Object),
            );
            ("ContextEdit", &edit.extra_json)
        }
    })
}

fn custom_content_to_pi(custom: &CustomMessageEntry) -> Result<Value> {
    if let [only] = custom.content.as_slice()
        && custom.string_content
        && let Some(user_content::Block::Text(text)) = &only.block
    {
        return Ok(Value::String(text.text.clone()));
    }
    let blocks = custom.content.iter().map(|item| {
        media_block_to_pi(match &item.block {
            Some(user_content::Block::Text(text)) => Some(MediaRef::Text(text)),
            Some(user_content::Block::Image(image)) => Some(MediaRef::Image(image)),
            None => None,
        })
        .map(Value::Object)
    });
    blocks.collect::<Result<Vec<_>>>().map(Value::Array)
}

fn replacement_to_pi(replacement: &ContextReplacement) -> Result<JsonObject> {
    let content = match replacement.content.as_slice() {
        [
            ContentBlock {
                block: Some(content_block::Block::Text(text)),
            },
        ] if replacement.string_content => Value::String(text.text.clone()),
        blocks => {
            let blocks = blocks
                .iter()
                .map(|block| any_block_to_pi(block).map(Value::Object));
            Value::Array(blocks.collect::<Result<Vec<_>>>()?)
        }
    };
    let mut out = JsonObject::new();
    out.insert("content".to_owned(), content);
    with_extra(
        out,
        &replacement.extra_json,
        "ContextReplacement",
        keys("ContextReplacement"),
    )
}

fn any_block_to_pi(block: &ContentBlock) -> Result<JsonObject> {
    let block = match &block.block {
        Some(content_block::Block::Image(image)) => {
            return media_block_to_pi(Some(MediaRef::Image(image)));
        }
        Some(content_block::Block::Text(text)) => {
            Some(assistant_content::Block::Text(text.clone()))
        }
        Some(content_block::Block::Thinking(thinking)) => {
            Some(assistant_content::Block::Thinking(thinking.clone()))
        }
        Some(content_block::Block::ToolCall(call)) => {
            Some(assistant_content::Block::ToolCall(call.clone()))
        }
        None => None,
    };
    assistant_block_to_pi(&AssistantContent { block })
}

// --- session files ---------------------------------------------------------------------------

/// A line of a session file that cannot be read: its number (from 1) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLineError {
    /// The line's number, from 1.
    pub line: usize,
    /// What is wrong with it; the path starts at `entry`.
    pub error: PiJsonError,
}

impl fmt::Display for SessionLineError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "line {}: {}", self.line, self.error)
    }
}

impl std::error::Error for SessionLineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A line of a session file that is not one JSON entry, which [`session_from_pi`] reads as an
/// `unparsed_line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionWarning {
    /// The line's number, from 1.
    pub line: usize,
    /// Why the line is not one JSON entry.
    pub message: String,
}

/// A pi session file (its text: JSON lines, as pi writes them) as its entries, one a line: the
/// entry of line n is `entries[n - 1]`. A line that is not one JSON entry is an `unparsed_line`,
/// kept byte for byte, and a [`SessionWarning`] naming it is pushed onto `warnings`.
///
/// # Errors
/// A [`SessionLineError`] for the first line of JSON that is no entry.
pub fn session_from_pi(
    text: &str,
    warnings: &mut Vec<SessionWarning>,
) -> std::result::Result<Vec<TranscriptEntry>, SessionLineError> {
    // An empty file has no lines; the newline that ends the last line starts none after it.
    let lines = (!text.is_empty()).then(|| text.strip_suffix('\n').unwrap_or(text).split('\n'));
    lines
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, line)| {
            let (entry, unparsed) =
                session_line_from_pi(line).map_err(|error| SessionLineError {
                    line: index + 1,
                    error,
                })?;
            if let Some(unparsed) = unparsed {
                warnings.push(SessionWarning {
                    line: index + 1,
                    message: format!("not one JSON entry ({unparsed}); kept as it is"),
                });
            }
            Ok(entry)
        })
        .collect()
}

/// One line, without its newline: its entry, and why it is not one JSON entry.
fn session_line_from_pi(line: &str) -> Result<(TranscriptEntry, Option<String>)> {
    let unparsed = |why: String| {
        let entry = TranscriptEntry {
            entry: Some(Entry::UnparsedLine(line.to_owned())),
            ..TranscriptEntry::default()
        };
        Ok((entry, Some(why)))
    };
    match load_json(line) {
        Err(_) if line.trim_matches([' ', '\t', '\r']).is_empty() => {
            unparsed("a blank line".into())
        }
        Err(error) => unparsed(error.detail),
        Ok(value) if !value.is_object() => {
            unparsed(format!("JSON that is not an object: {}", type_name(&value)))
        }
        Ok(value) => Ok((entry_from_pi(&value, "entry")?, None)),
    }
}

/// Entries as the text of a pi session file: each entry's line, as `JSON.stringify` writes it,
/// ending with a newline; an unparsed line as it was read.
///
/// # Errors
/// A [`PiJsonError`] for the first entry pi-JSON cannot hold, or an unparsed line that holds a
/// newline (it would be read back as two lines).
pub fn session_to_pi(entries: &[TranscriptEntry]) -> Result<String> {
    let mut text = String::new();
    for entry in entries {
        match &entry.entry {
            Some(Entry::UnparsedLine(line)) if line.contains('\n') => {
                return Err(PiJsonError::new(
                    "TranscriptEntry.unparsed_line",
                    "holds a newline, so it would be read back as two lines",
                ));
            }
            Some(Entry::UnparsedLine(line)) => text.push_str(line),
            _ => text.push_str(&dump_json(&Value::Object(entry_to_pi(entry)?))),
        }
        text.push('\n');
    }
    Ok(text)
}
