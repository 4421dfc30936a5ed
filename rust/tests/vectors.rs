//! The golden wire vectors of tests/vectors: each decodes as its type, re-encodes to identical
//! bytes, prints ProtoJSON equal to its .json file and parses that JSON back to the same message.
//! The checks that fail for reasons outside this crate are listed in known_failures.json, and
//! exactly those must fail.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use pi_proto::v1;
use prost::Message;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use support::{bounded, repo_root};

/// A check that failed: (check, vector) → what went wrong.
type Failures = BTreeMap<(String, String), String>;

fn check<T>(name: &str, binary: &[u8], json: &Value, failures: &mut Failures)
where
    T: Message + Default + PartialEq + Serialize + DeserializeOwned,
{
    let mut fail = |check: &str, detail: String| {
        failures.insert((check.to_owned(), name.to_owned()), detail);
    };
    let message = match T::decode(binary) {
        Ok(message) => message,
        Err(error) => return fail("binary", format!("does not decode: {error}")),
    };
    let encoded = message.encode_to_vec();
    if encoded != binary {
        fail(
            "binary",
            format!(
                "re-encodes to {} bytes, not the {} read",
                encoded.len(),
                binary.len()
            ),
        );
    }
    match serde_json::to_value(&message) {
        Ok(printed) if same_json(&printed, json) => {}
        Ok(printed) => fail("json", format!("prints {printed}, expected {json}")),
        Err(error) => fail("json", format!("does not print: {error}")),
    }
    match serde_json::from_value::<T>(json.clone()) {
        Ok(parsed) if parsed == message => {}
        Ok(_) => fail("json-parse", "parses to a different message".to_owned()),
        Err(error) => fail("json-parse", format!("does not parse: {error}")),
    }
}

/// JSON values compared as Python compares them: numbers by value, so `1` equals `1.0`.
fn same_json(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(left), Value::Number(right)) => match (left.as_i128(), right.as_i128()) {
            (Some(left), Some(right)) => left == right,
            _ => left.as_f64() == right.as_f64(),
        },
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len() && left.iter().zip(right).all(|(l, r)| same_json(l, r))
        }
        (Value::Object(left), Value::Object(right)) => {
            left.len() == right.len()
                && left
                    .iter()
                    .all(|(key, value)| right.get(key).is_some_and(|other| same_json(value, other)))
        }
        _ => left == right,
    }
}

/// Run the checks of one vector as the message type its manifest entry names.
fn check_as(type_name: &str, name: &str, binary: &[u8], json: &Value, failures: &mut Failures) {
    macro_rules! dispatch {
        ($($type:ident),* $(,)?) => {
            match type_name.strip_prefix("pi.ai.v1.") {
                $(Some(stringify!($type)) => check::<v1::$type>(name, binary, json, failures),)*
                _ => panic!("vector {name}: no generated type for {type_name}"),
            }
        };
    }
    dispatch!(
        JsonText,
        TextContent,
        ThinkingContent,
        ImageContent,
        ToolCall,
        UserContent,
        AssistantContent,
        ToolResultContent,
        Cost,
        Usage,
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        CustomMessage,
        SessionEntry,
        AgentMessage,
        Tool,
        AgentContext,
        GenerationOptions,
        StreamRequest,
        StartEvent,
        TextStartEvent,
        TextDeltaEvent,
        TextEndEvent,
        ThinkingStartEvent,
        ThinkingDeltaEvent,
        ThinkingEndEvent,
        ToolCallStartEvent,
        ToolCallDeltaEvent,
        ToolCallEndEvent,
        DoneEvent,
        ErrorEvent,
        ModelEvent,
    );
}

fn read_json(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn every_vector_round_trips_except_the_known_failures() {
    bounded(|| {
        let directory = repo_root().join("tests/vectors");
        let manifest = read_json(&directory.join("manifest.json"));
        let vectors = manifest["vectors"].as_array().expect("a list of vectors");
        assert!(vectors.len() > 50, "the manifest lists every vector");

        let mut failures = Failures::new();
        for vector in vectors {
            let name = vector["name"].as_str().expect("a name");
            let type_name = vector["type"].as_str().expect("a type");
            let binary =
                fs::read(directory.join(format!("{name}.binpb"))).expect("the .binpb file");
            let json = read_json(&directory.join(format!("{name}.json")));
            check_as(type_name, name, &binary, &json, &mut failures);
        }

        let known_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("known_failures.json");
        let known: Vec<(String, String)> = read_json(&known_path)
            .as_array()
            .expect("a list of known failures")
            .iter()
            .map(|entry| {
                assert_eq!(entry["runtime"], "rust");
                assert!(
                    entry["reason"]
                        .as_str()
                        .is_some_and(|reason| !reason.is_empty())
                );
                let field = |key: &str| entry[key].as_str().expect("a string").to_owned();
                (field("check"), field("vector"))
            })
            .collect();
        let unexpected: Vec<_> = failures
            .iter()
            .filter(|(key, _)| !known.contains(key))
            .collect();
        let fixed: Vec<_> = known
            .iter()
            .filter(|key| !failures.contains_key(*key))
            .collect();
        assert!(
            unexpected.is_empty() && fixed.is_empty(),
            "failing but not listed in known_failures.json: {unexpected:#?}\n\
             listed in known_failures.json but passing: {fixed:#?}"
        );
    });
}
