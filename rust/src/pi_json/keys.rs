//! The keys of each pi-JSON object, in the order the writer writes them (the order pi builds the
//! object in): the schema states them, as the `modelled_keys` of the `pi.ai.v1.json` option of the
//! message's `extra_json`, so the codec has no table of its own. An object read with its keys in
//! another order lists them under [`ORDER_KEY`] in its `extra_json`, and is written in that order.

use std::sync::LazyLock;

use prost_reflect::Value as Reflected;

use crate::descriptors::POOL;
use crate::js_json::JsonObject;

/// The key of `extra_json` that lists the keys of an object whose order differs from the
/// writer's, which it then follows.
pub(crate) const ORDER_KEY: &str = "$order";

/// The keys of the objects of pi's messages, contexts and tools, by the schema's messages.
pub(crate) struct Keys {
    pub assistant: Vec<String>,
    pub system: Vec<String>,
    pub user: Vec<String>,
    pub tool_result: Vec<String>,
    pub text: Vec<String>,
    pub thinking: Vec<String>,
    pub tool_call: Vec<String>,
    pub image: Vec<String>,
    pub usage: Vec<String>,
    pub cost: Vec<String>,
    pub context: Vec<String>,
    pub tool: Vec<String>,
    pub tool_reference: Vec<String>,
    pub json_schema: Vec<String>,
    pub grammar: Vec<String>,
    /// A grammar's `variants` object.
    pub variants: Vec<String>,
    pub diagnostic: Vec<String>,
    pub diagnostic_error: Vec<String>,
    pub deferred: Vec<String>,
    pub nested_calls: Vec<String>,
    pub nested_call: Vec<String>,
}

/// Read from the schema once.
pub(crate) static KEYS: LazyLock<Keys> = LazyLock::new(|| {
    let extra = |message: &str| modelled_keys(message, "extra_json");
    Keys {
        assistant: extra("AssistantMessage"),
        system: extra("SystemMessage"),
        user: extra("UserMessage"),
        tool_result: extra("ToolResultMessage"),
        text: extra("TextContent"),
        thinking: extra("ThinkingContent"),
        tool_call: extra("ToolCall"),
        image: extra("ImageContent"),
        usage: extra("Usage"),
        cost: extra("Cost"),
        context: extra("AgentContext"),
        tool: extra("Tool"),
        tool_reference: extra("ToolReference"),
        json_schema: extra("JsonSchemaSampling"),
        grammar: extra("GrammarSampling"),
        variants: modelled_keys("GrammarSampling", "variants_extra_json"),
        diagnostic: extra("Diagnostic"),
        diagnostic_error: extra("DiagnosticError"),
        deferred: extra("DeferredHandle"),
        nested_calls: extra("NestedToolCalls"),
        nested_call: extra("NestedToolCall"),
    }
});

/// The `modelled_keys` of the JSON option of `field` of the pi.ai.v1 message `message`.
///
/// # Panics
/// If the schema has no such field: the names are the codec's own, so that is a bug.
pub(crate) fn modelled_keys(message: &str, field: &str) -> Vec<String> {
    let option = POOL
        .get_extension_by_name("pi.ai.v1.json")
        .expect("the schema declares pi.ai.v1.json");
    let field = POOL
        .get_message_by_name(&format!("pi.ai.v1.{message}"))
        .and_then(|message| message.get_field_by_name(field))
        .unwrap_or_else(|| panic!("pi.ai.v1.{message} has no field {field}"));
    let options = field.options();
    let rule = options.get_extension(&option);
    let keys = rule
        .as_message()
        .and_then(|rule| rule.get_field_by_name("modelled_keys"));
    keys.as_deref()
        .and_then(Reflected::as_list)
        .map(|keys| {
            keys.iter()
                .filter_map(Reflected::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `out` with the keys of `order` first, in that order, then the others as they are.
pub(crate) fn in_order(mut out: JsonObject, order: &[String]) -> JsonObject {
    let mut placed = JsonObject::new();
    for key in order {
        if let Some((key, value)) = out.shift_remove_entry(key) {
            placed.insert(key, value);
        }
    }
    placed.extend(out);
    placed
}
