//! Message rules: the schema's protovalidate (`buf.validate`) rules, then its JSON text rules.
//!
//! Every rule that fits one message is an annotation in `proto/pi/ai/v1`, evaluated here by
//! prost-protovalidate from the message's descriptor. What an annotation cannot say is whether a
//! string holds the JSON that the field's `pi.ai.v1.json` option asks for: one walker checks
//! every field carrying that option (see `json_text` for the rules), once the message passes its
//! annotations. A broken rule is a [`Violation`]: the field's path from the checked message, the
//! rule's id and a detail, e.g. `context.messages[2].assistant.content[1].tool_call.arguments_json`,
//! `json.object`.

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

use prost_protovalidate::types::field_path_element::Subscript;
use prost_protovalidate::types::{FieldPath, FieldPathElement};
use prost_protovalidate::{Error, Validator};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value};

use crate::descriptors::POOL;
use crate::json_text;

/// One broken rule: where, which rule, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The offending field's path from the checked message: field names joined by `.`, list
    /// indexes in brackets; a oneof that must be set is named by the oneof, and a rule of a whole
    /// message by that message's path (empty for the checked message itself).
    pub field_path: String,
    /// The rule's id: a protovalidate rule (`required`, `string.min_len`), a CEL rule of the
    /// schema (`done.reason_matches_message`) or a JSON text rule (`json.syntax`).
    pub rule_id: String,
    /// What is wrong, in words.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.field_path.is_empty() {
            "the message"
        } else {
            &self.field_path
        };
        write!(formatter, "{path}: {} [{}]", self.detail, self.rule_id)
    }
}

/// A message that breaks one or more rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Every rule the message breaks.
    pub violations: Vec<Violation>,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, violation) in self.violations.iter().enumerate() {
            if index > 0 {
                formatter.write_str("; ")?;
            }
            write!(formatter, "{violation}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}

/// Every rule `message` breaks: all of its protovalidate rules, or, when those all hold, its
/// JSON text rules. Empty when the message is valid.
pub fn violations(message: &impl ReflectMessage) -> Vec<Violation> {
    static VALIDATOR: LazyLock<Validator> = LazyLock::new(Validator::new);
    let dynamic = message.transcode_to_dynamic();
    match VALIDATOR.validate(&dynamic) {
        Ok(()) => json_violations(&dynamic),
        Err(Error::Validation(error)) => error
            .violations()
            .iter()
            .map(|violation| {
                let proto = violation.to_proto();
                Violation {
                    field_path: render(proto.field.as_ref()),
                    rule_id: violation.rule_id().to_owned(),
                    detail: violation.message().to_owned(),
                }
            })
            .collect(),
        // The schema's rules compile: anything else is a defect of this crate, reported as a
        // violation of the message as a whole rather than a panic.
        Err(error) => vec![Violation {
            field_path: String::new(),
            rule_id: "protovalidate".to_owned(),
            detail: error.to_string(),
        }],
    }
}

/// `Ok` when `message` breaks no rule, else every rule it breaks.
pub fn check(message: &impl ReflectMessage) -> Result<(), ValidationError> {
    let violations = violations(message);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ValidationError { violations })
    }
}

/// A protovalidate field path as text: `context.messages[2].assistant.content[1].tool_call.id`.
fn render(path: Option<&FieldPath>) -> String {
    let mut text = String::new();
    for element in path.map_or(&[][..], |path| path.elements.as_slice()) {
        if !text.is_empty() {
            text.push('.');
        }
        text.push_str(element.field_name());
        push_subscript(&mut text, element);
    }
    text
}

fn push_subscript(text: &mut String, element: &FieldPathElement) {
    let subscript = match &element.subscript {
        None => return,
        Some(Subscript::Index(index) | Subscript::UintKey(index)) => index.to_string(),
        Some(Subscript::IntKey(key)) => key.to_string(),
        Some(Subscript::BoolKey(key)) => key.to_string(),
        Some(Subscript::StringKey(key)) => format!("{key:?}"),
    };
    text.push('[');
    text.push_str(&subscript);
    text.push(']');
}

// --- the JSON text rules ------------------------------------------------------------------------

/// The JSON text rules of every field marked with the `pi.ai.v1.json` option, in field order.
fn json_violations(message: &DynamicMessage) -> Vec<Violation> {
    let mut found = Vec::new();
    walk(message, "", &mut found);
    found
}

/// What to look at in one message type.
#[derive(Default)]
struct Plan {
    /// Fields holding JSON text, with their option.
    texts: Vec<(FieldDescriptor, JsonText)>,
    /// Message fields (single or repeated) whose type holds JSON text somewhere inside.
    nested: Vec<FieldDescriptor>,
    /// Fields that protovalidate ignores always, and so does this walker.
    skipped: Vec<FieldDescriptor>,
}

/// The `pi.ai.v1.JsonText` option of a field.
struct JsonText {
    object_required: bool,
    empty_allowed: bool,
    /// The keys an `extra_json` object must not hold (`json.extra`); empty elsewhere.
    modelled_keys: Vec<String>,
}

/// The plan of every message type of the pool, built once.
static PLANS: LazyLock<HashMap<String, Plan>> = LazyLock::new(|| {
    let option = POOL
        .get_extension_by_name("pi.ai.v1.json")
        .expect("the schema declares pi.ai.v1.json");
    let rules = POOL
        .get_extension_by_name("buf.validate.field")
        .expect("the schema imports buf.validate");
    let ignore_always = POOL
        .get_enum_by_name("buf.validate.Ignore")
        .and_then(|ignore| ignore.get_value_by_name("IGNORE_ALWAYS"))
        .map(|value| value.number());
    let mut plans: HashMap<String, Plan> = HashMap::new();
    for message in POOL.all_messages() {
        let mut plan = Plan::default();
        for field in message.fields() {
            let options = field.options();
            let ignore = options.get_extension(&rules);
            let ignore = ignore
                .as_message()
                .and_then(|rules| rules.get_field_by_name("ignore"))
                .and_then(|ignore| ignore.as_enum_number());
            if options.has_extension(&rules) && ignore.is_some() && ignore == ignore_always {
                // An unfinished message (a partial, a start header): no rule applies inside.
                plan.skipped.push(field);
            } else if options.has_extension(&option) {
                let rule = options.get_extension(&option);
                let rule = rule.as_message();
                let get = |name: &str| rule.and_then(|rule| rule.get_field_by_name(name));
                // JSON_SHAPE_OBJECT is 2.
                let object_required = get("shape").and_then(|shape| shape.as_enum_number());
                let empty_allowed = get("empty_allowed").and_then(|allowed| allowed.as_bool());
                let modelled_keys = get("modelled_keys")
                    .and_then(|keys| {
                        let keys = keys.as_list()?.iter().filter_map(Value::as_str);
                        Some(keys.map(str::to_owned).collect())
                    })
                    .unwrap_or_default();
                plan.texts.push((
                    field,
                    JsonText {
                        object_required: object_required == Some(2),
                        empty_allowed: empty_allowed == Some(true),
                        modelled_keys,
                    },
                ));
            }
        }
        plans.insert(message.full_name().to_owned(), plan);
    }
    // A message field is worth entering when its type holds JSON text, directly or further in;
    // repeat until nothing changes, as message types may refer to each other in a cycle.
    loop {
        let holds = |name: &str| {
            plans
                .get(name)
                .is_some_and(|plan| !plan.texts.is_empty() || !plan.nested.is_empty())
        };
        let mut additions = Vec::new();
        for message in POOL.all_messages() {
            let plan = &plans[message.full_name()];
            for field in message.fields() {
                if let Kind::Message(kind) = field.kind()
                    && holds(kind.full_name())
                    && !plan.nested.contains(&field)
                    && !plan.skipped.contains(&field)
                {
                    additions.push((message.full_name().to_owned(), field));
                }
            }
        }
        if additions.is_empty() {
            break plans;
        }
        for (name, field) in additions {
            if let Some(plan) = plans.get_mut(&name) {
                plan.nested.push(field);
            }
        }
    }
});

fn walk(message: &DynamicMessage, path: &str, found: &mut Vec<Violation>) {
    let Some(plan) = PLANS.get(message.descriptor().full_name()) else {
        return;
    };
    for (field, rule) in &plan.texts {
        if field.supports_presence() && !message.has_field(field) {
            continue;
        }
        let value = message.get_field(field);
        let text = value.as_str().unwrap_or_default();
        if text.is_empty() && rule.empty_allowed {
            continue;
        }
        // json.extra is judged only once the text passed the other rules.
        let problem = json_text::check(text, rule.object_required).or_else(|| {
            (!rule.modelled_keys.is_empty())
                .then(|| json_text::modelled_key(text, &rule.modelled_keys))
                .flatten()
        });
        if let Some(problem) = problem {
            found.push(Violation {
                field_path: joined(path, field.name()),
                rule_id: problem.rule_id.to_owned(),
                detail: problem.detail,
            });
        }
    }
    for field in &plan.nested {
        if !field.is_list() && !message.has_field(field) {
            continue;
        }
        match message.get_field(field).as_ref() {
            Value::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    if let Some(item) = item.as_message() {
                        let step = format!("{}[{index}]", field.name());
                        walk(item, &joined(path, &step), found);
                    }
                }
            }
            Value::Message(item) => walk(item, &joined(path, field.name()), found),
            _ => {}
        }
    }
}

fn joined(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}
