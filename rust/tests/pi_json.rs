//! pi-JSON converts losslessly: every line of the session files pi wrote (and of older pi's
//! shapes) comes back byte for byte, through the wire too; pi 1.6's delta-only events come back
//! as pi wrote them; bad input names its path; an edit is what gets written; lone surrogates
//! survive; every entry pi wrote is typed, and its tree can be walked.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use pi_proto::v1::assistant_content::Block;
use pi_proto::v1::model_event::Event;
use pi_proto::v1::session_entry::Body;
use pi_proto::v1::transcript_entry::{Entry, Parent};
use pi_proto::v1::{AgentMessage, ModelEvent, StartEvent, TranscriptEntry, agent_message::Role};
use pi_proto::{
    Accumulator, assistant_from_pi, dump_json, entry_from_pi, entry_to_pi, event_from_pi,
    event_to_pi, load_json, message_from_pi, message_to_pi, session_from_pi, session_to_pi,
    text_of,
};
use prost::Message;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The session files pi 1.6 wrote itself, but the one of events.
fn pi_1_6_sessions() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures().join("pi-1.6-sessions"))
        .expect("the fixtures")
        .map(|entry| entry.expect("a fixture").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .filter(|path| !path.ends_with("events-json-mode.jsonl"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 15, "{paths:?}");
    paths
}

fn through_the_wire<M: Message + Default>(message: &M) -> M {
    M::decode(message.encode_to_vec().as_slice()).expect("it decodes")
}

fn entry_of(line: &str) -> TranscriptEntry {
    let value = load_json(line).expect("JSON");
    entry_from_pi(&value, "entry").unwrap_or_else(|error| panic!("{error}: {line}"))
}

fn written(entry: &TranscriptEntry) -> String {
    dump_json(&Value::Object(
        entry_to_pi(entry).expect("pi-JSON holds it"),
    ))
}

/// Every line of `path`, read, through the wire and written, is the line.
fn assert_lines_come_back(path: &Path) {
    let text = read(path);
    let mut count = 0;
    for (number, line) in text.lines().enumerate() {
        let entry = through_the_wire(&entry_of(line));
        assert_eq!(written(&entry), line, "{}:{}", path.display(), number + 1);
        count += 1;
    }
    assert!(count > 0, "{} is empty", path.display());
}

#[test]
fn every_line_pi_1_6_wrote_comes_back_byte_for_byte() {
    for path in pi_1_6_sessions() {
        assert_lines_come_back(&path);
    }
}

#[test]
fn every_line_of_a_real_session_and_of_older_shapes_comes_back() {
    assert_lines_come_back(&fixtures().join("pi-sessions/before-compaction.jsonl"));
    assert_lines_come_back(&fixtures().join("older-pi-shapes.jsonl"));
}

#[test]
fn a_session_file_reads_as_its_entries_and_writes_back_whole() {
    for path in pi_1_6_sessions() {
        let text = read(&path);
        let mut warnings = Vec::new();
        let entries = session_from_pi(&text, &mut warnings).expect("a session file");
        assert_eq!(entries.len(), text.lines().count());
        assert_eq!(warnings, []);
        assert_eq!(session_to_pi(&entries).expect("pi-JSON holds them"), text);
    }
    let broken = "{\"type\":\"session\",\"id\":\"a\"}\n\n{\"role\":\"user\",\"content\":[{\"type\":\"video\"}]}\n";
    let error = session_from_pi(broken, &mut Vec::new()).expect_err("line 3 is bad");
    assert_eq!(
        (error.line, error.error.path.as_str()),
        (3, "entry.content[0].type")
    );
}

#[test]
fn a_line_that_is_not_one_entry_is_kept_byte_for_byte_and_named() {
    // Excerpts of two session files pi committed to its own repository, each with a line that
    // holds two entries with no newline between them (tests/fixtures/pi-sessions/README.md).
    for (name, bad) in [
        ("entries-run-together-message.jsonl", 4),
        ("entries-run-together-compaction.jsonl", 5),
    ] {
        let text = read(&fixtures().join("pi-sessions").join(name));
        let mut warnings = Vec::new();
        let entries = session_from_pi(&text, &mut warnings).expect("a session file");
        assert_eq!(
            warnings.iter().map(|w| w.line).collect::<Vec<_>>(),
            [bad],
            "{name}"
        );
        assert!(
            matches!(&entries[bad - 1].entry, Some(Entry::UnparsedLine(line)) if line.contains("}}{\"type\":")),
            "{name}"
        );
        let entries: Vec<_> = entries.iter().map(through_the_wire).collect();
        assert_eq!(session_to_pi(&entries).expect("written"), text, "{name}");
    }
    // A line cut short at the end of the file: kept, and written with the newline pi would add.
    let mut warnings = Vec::new();
    let entries = session_from_pi("\n{\"role\":\r\n{\"role\":", &mut warnings).expect("kept");
    assert_eq!(
        warnings.iter().map(|w| w.line).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        session_to_pi(&entries).expect("written"),
        "\n{\"role\":\r\n{\"role\":\n"
    );
    // One holding a newline would be two lines: not written.
    let two = TranscriptEntry {
        entry: Some(Entry::UnparsedLine("a\nb".into())),
        ..TranscriptEntry::default()
    };
    assert!(session_to_pi(&[two]).is_err());
}

#[test]
fn the_thinking_message_converts_back_unchanged() {
    // Pretty-printed, so compared as the text JSON.stringify writes for it.
    let original = load_json(&read(
        &fixtures().join("pi-sessions/assistant-message-with-thinking-code.json"),
    ))
    .expect("JSON");
    let message = through_the_wire(&message_from_pi(&original, "message").expect("a message"));
    let Some(Role::Assistant(assistant)) = &message.role else {
        panic!("an assistant message: {message:?}");
    };
    let Some(Block::Thinking(thinking)) = &assistant.content[0].block else {
        panic!("a thinking block first: {assistant:?}");
    };
    assert!(
        thinking
            .thinking_signature
            .as_ref()
            .is_some_and(|signature| !signature.is_empty())
    );
    let back = Value::Object(message_to_pi(&message).expect("pi-JSON holds it"));
    assert_eq!(dump_json(&back), dump_json(&original));
}

#[test]
fn pi_1_6_delta_only_events_read_and_write_back_byte_for_byte() {
    let mut accumulator = Accumulator::default();
    let mut updates = 0;
    for line in read(&fixtures().join("pi-1.6-sessions/events-json-mode.jsonl")).lines() {
        let value = load_json(line).expect("JSON");
        if value["type"] == "message_start" && value["message"]["role"] == "assistant" {
            let header = assistant_from_pi(&value["message"], "message").expect("a header");
            accumulator = Accumulator::default();
            let start = ModelEvent {
                event: Some(Event::Start(StartEvent {
                    header: Some(header),
                    ..Default::default()
                })),
                ..ModelEvent::default()
            };
            accumulator.apply(&start).expect("the stream starts");
        }
        if value["type"] == "message_update" {
            let update = &value["assistantMessageEvent"];
            let mut event = event_from_pi(update, "assistantMessageEvent").expect("an event");
            assert!(event.partial.is_none());
            accumulator.apply(&event).expect("the event applies");
            // The partial it makes, from which an `*_end` event's `content` is written.
            event.partial = Some(accumulator.partial().clone());
            let back = event_to_pi(&event, true).expect("pi-JSON holds it");
            assert_eq!(dump_json(&Value::Object(back)), dump_json(update), "{line}");
            updates += 1;
        }
    }
    assert_eq!(updates, 25);
    assert_eq!(
        text_of(accumulator.partial()),
        "README 的标题就是项目名：tiny-pi。"
    );
}

#[test]
fn bad_pi_json_is_refused_at_the_path_of_the_bad_value() {
    let assistant = r#""api":"a","provider":"p","model":"m","stopReason":"stop""#;
    for (text, path) in [
        (r#"{"role":"assistant","content":[],"stopReason":"finished"}"#.to_owned(), "message.stopReason"),
        (format!(r#"{{"role":"assistant","content":[],{assistant},"timestamp":"now"}}"#), "message.timestamp"),
        (format!(r#"{{"role":"assistant","content":[],{assistant},"timestamp":1.5}}"#), "message.timestamp"),
        (format!(r#"{{"role":"assistant","content":[],{assistant},"timestamp":9223372036854775808}}"#), "message.timestamp"),
        (r#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"video"}]}"#.to_owned(), "message.content[1].type"),
        (r#"{"role":"assistant","content":["text"]}"#.to_owned(), "message.content[0]"),
        (r#"{"role":"user","content":[{"type":"image","data":"QQ","mimeType":"x"}]}"#.to_owned(), "message.content[0].data"),
        (r#"{"role":"user","content":[{"type":"image","data":"QR==","mimeType":"x"}]}"#.to_owned(), "message.content[0].data"),
        (r#"{"role":"toolResult","toolCallId":"c","content":[],"isError":"no"}"#.to_owned(), "message.isError"),
        (r#"{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[]}]}"#.to_owned(), "message.content[0].arguments"),
        (r#"{"role":"assistant","content":[],"usage":{"input":true}}"#.to_owned(), "message.usage.input"),
        (r#"{"content":[]}"#.to_owned(), "message.role"),
        ("[]".to_owned(), "message"),
    ] {
        let value = load_json(&text).expect("JSON");
        let error = message_from_pi(&value, "message").expect_err(&text);
        assert_eq!(error.path, path, "{text}: {error}");
    }
    let bad_parent =
        load_json(r#"{"type":"label","id":"a","parentId":7,"timestamp":"t"}"#).expect("JSON");
    assert_eq!(
        entry_from_pi(&bad_parent, "entry")
            .expect_err("a number")
            .path,
        "entry.parentId"
    );
    let unknown =
        load_json(r#"{"type":"text_delta","contentIndex":0,"delta":"a","extra":1}"#).expect("JSON");
    assert_eq!(event_from_pi(&unknown, "").expect_err("not pi's").path, "");
    let negative = load_json(r#"{"type":"text_start","contentIndex":-1}"#).expect("JSON");
    assert_eq!(
        event_from_pi(&negative, "").expect_err("no block").path,
        "contentIndex"
    );
}

#[test]
fn an_edit_of_a_read_message_is_what_gets_written() {
    // An older pi's usage: no cacheRead; a cost written 1.0.
    let line = r#"{"role":"assistant","content":[],"usage":{"input":1,"output":2,"totalTokens":3,"cost":{"input":1.0,"total":1}},"stopReason":"stop"}"#;
    let mut message =
        message_from_pi(&load_json(line).expect("JSON"), "message").expect("a message");
    let unedited = dump_json(&Value::Object(
        message_to_pi(&message).expect("pi-JSON holds it"),
    ));
    assert_eq!(
        unedited,
        r#"{"role":"assistant","content":[],"usage":{"input":1,"output":2,"totalTokens":3,"cost":{"input":1,"total":1}},"stopReason":"stop"}"#
    );
    let Some(Role::Assistant(assistant)) = &mut message.role else {
        panic!("an assistant message");
    };
    let usage = assistant.usage.as_mut().expect("usage");
    usage.cache_read = Some(100);
    usage.cost.as_mut().expect("a cost").input = Some(2.5);
    let written = message_to_pi(&message).expect("pi-JSON holds it");
    assert_eq!(written["usage"]["cacheRead"], 100);
    assert_eq!(written["usage"]["cost"]["input"], 2.5);
    // In pi's order: cacheRead after output, where pi writes it.
    assert_eq!(
        dump_json(&written["usage"]),
        r#"{"input":1,"output":2,"cacheRead":100,"totalTokens":3,"cost":{"input":2.5,"total":1}}"#
    );
}

#[test]
fn numbers_are_read_and_written_as_javascript_does() {
    let line = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"a":1.0,"b":9007199254740993,"c":-0,"d":123456789012345678901234567890}}],"usage":{"input":1.0,"output":-0,"cost":{"input":1e21,"output":1e20,"cacheRead":1.5e-6,"cacheWrite":1e-7,"total":5e-324}},"stopReason":"stop","timestamp":1}"#;
    let message = message_from_pi(&load_json(line).expect("JSON"), "message").expect("a message");
    let Some(Role::Assistant(assistant)) = &message.role else {
        panic!("an assistant message");
    };
    let usage = assistant.usage.as_ref().expect("usage");
    assert_eq!((usage.input, usage.output), (Some(1), Some(0)));
    let Some(Block::ToolCall(call)) = &assistant.content[0].block else {
        panic!("a tool call");
    };
    assert_eq!(
        call.arguments_json.as_deref(),
        Some(r#"{"a":1,"b":9007199254740992,"c":0,"d":1.2345678901234568e+29}"#)
    );
    let back = dump_json(&Value::Object(
        message_to_pi(&message).expect("pi-JSON holds it"),
    ));
    assert_eq!(
        back,
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"a":1,"b":9007199254740992,"c":0,"d":1.2345678901234568e+29}}],"usage":{"input":1,"output":0,"cost":{"input":1e+21,"output":100000000000000000000,"cacheRead":0.0000015,"cacheWrite":1e-7,"total":5e-324}},"stopReason":"stop","timestamp":1}"#
    );
    let cost = usage.cost.as_ref().expect("a cost");
    assert_eq!(cost.total, Some(5e-324));
}

#[test]
fn lone_surrogates_map_to_text_protobuf_holds_and_back() {
    let line = r#"{"role":"user","content":"cut \ud83d, \udc00, a pair \ud83d\ude00, and \u{10f83d}","timestamp":1}"#
        .replace("\\u{10f83d}", "\u{10f83d}");
    let message = message_from_pi(&load_json(&line).expect("JSON"), "message").expect("a message");
    let Some(Role::User(user)) = &message.role else {
        panic!("a user message");
    };
    assert_eq!(
        text_of(user),
        "cut \u{10f83d}, \u{10fc00}, a pair 😀, and \u{10f7ff}\u{10f83d}"
    );
    let message: AgentMessage = through_the_wire(&message);
    let back = dump_json(&Value::Object(
        message_to_pi(&message).expect("pi-JSON holds it"),
    ));
    assert_eq!(back, line.replace("\\ud83d\\ude00", "😀"));
}

fn body_of(entry: &TranscriptEntry) -> Option<&Body> {
    match &entry.entry {
        Some(Entry::SessionEntry(session_entry)) => session_entry.body.as_ref(),
        _ => None,
    }
}

fn body_extra(body: &Body) -> &str {
    match body {
        Body::Header(body) => &body.extra_json,
        Body::ThinkingLevelChange(body) => &body.extra_json,
        Body::ModelChange(body) => &body.extra_json,
        Body::Usage(body) => &body.extra_json,
        Body::Compaction(body) => &body.extra_json,
        Body::BranchSummary(body) => &body.extra_json,
        Body::Custom(body) => &body.extra_json,
        Body::CustomMessage(body) => &body.extra_json,
        Body::Label(body) => &body.extra_json,
        Body::SessionInfo(body) => &body.extra_json,
        Body::ContextEdit(body) => &body.extra_json,
    }
}

#[test]
fn every_entry_pi_wrote_is_typed() {
    for path in pi_1_6_sessions() {
        for (number, line) in read(&path).lines().enumerate() {
            let at = format!("{}:{}", path.display(), number + 1);
            let entry = entry_of(line);
            assert!(entry.id.is_some() && entry.timestamp.is_some(), "{at}");
            match &entry.entry {
                Some(Entry::Message(_)) => assert_eq!(entry.session_json, "", "{at}"),
                Some(Entry::SessionEntry(session_entry)) => {
                    let body = session_entry
                        .body
                        .as_ref()
                        .unwrap_or_else(|| panic!("{at}: untyped"));
                    assert_eq!(session_entry.fields_json, "", "{at}");
                    assert_eq!(body_extra(body), "", "{at}: keys left untyped");
                }
                Some(Entry::UnparsedLine(_)) | None => panic!("{at}: no entry"),
            }
        }
    }
}

#[test]
fn the_tree_is_walked_without_json() {
    let text = read(&fixtures().join("pi-1.6-sessions/branch.jsonl"));
    let entries = session_from_pi(&text, &mut Vec::new()).expect("a session");
    let mut seen = HashSet::new();
    let mut roots = 0;
    // The header is the session's, not the tree's.
    for entry in &entries[1..] {
        match &entry.parent {
            Some(Parent::Root(_)) => roots += 1,
            Some(Parent::ParentId(parent)) => assert!(seen.contains(parent), "{entry:?}"),
            None => panic!("no parent: {entry:?}"),
        }
        seen.insert(entry.id.clone().expect("an id"));
    }
    assert_eq!(roots, 1);
    let summaries: Vec<_> = entries
        .iter()
        .filter_map(|entry| match body_of(entry) {
            Some(Body::BranchSummary(summary)) => Some(summary),
            _ => None,
        })
        .collect();
    let [summary] = summaries.as_slice() else {
        panic!("one branch summary: {summaries:?}");
    };
    assert!(seen.contains(summary.from_id.as_ref().expect("from an entry")));
    assert_eq!(
        summary.usage.as_ref().and_then(|usage| usage.total_tokens),
        Some(52)
    );
}

#[test]
fn an_edited_entry_writes_what_was_set_in_pis_order() {
    let line = r#"{"type":"label","id":"74d38200","parentId":"50667f34","timestamp":"2026-12-02T06:19:59.678Z","targetId":"50667f34","label":"checkpoint-1"}"#;
    let mut entry = entry_of(line);
    let Some(Entry::SessionEntry(session_entry)) = &mut entry.entry else {
        panic!("a session entry");
    };
    let Some(Body::Label(label)) = &mut session_entry.body else {
        panic!("a label");
    };
    label.label = Some("checkpoint-2".to_owned());
    entry.parent = Some(Parent::ParentId("74d38100".to_owned()));
    let expected = line
        .replace("checkpoint-1", "checkpoint-2")
        .replace(r#""parentId":"50667f34""#, r#""parentId":"74d38100""#);
    assert_eq!(written(&entry), expected);
}

#[test]
fn an_unknown_entry_type_round_trips_with_its_place_typed() {
    let line = r#"{"type":"bookmark","id":"77aa88bb","parentId":null,"timestamp":"2026-12-02T06:20:00.487Z","note":"here","at":[1,2.5]}"#;
    let entry = through_the_wire(&entry_of(line));
    let Some(Entry::SessionEntry(session_entry)) = &entry.entry else {
        panic!("a session entry");
    };
    assert!(session_entry.body.is_none());
    assert_eq!(session_entry.fields_json, r#"{"note":"here","at":[1,2.5]}"#);
    assert_eq!(entry.id.as_deref(), Some("77aa88bb"));
    assert!(matches!(entry.parent, Some(Parent::Root(_))));
    assert_eq!(written(&entry), line);
}
