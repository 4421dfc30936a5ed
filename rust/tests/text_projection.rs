//! `text_of` joins the text blocks with newlines and leaves the message unchanged.

mod support;

use pi_proto::text_of;
use pi_proto::v1::agent_message::Role;
use pi_proto::v1::{
    AgentMessage, CustomMessage, StopReason, SystemMessage, SystemSection, TextContent, Tool,
    TranscriptEntry, transcript_entry,
};
use support::{assistant_message, bounded, text, tool_call};

#[test]
fn text_projection_skips_the_tool_call_and_keeps_it() {
    bounded(|| {
        let message = assistant_message(
            vec![
                text("先读取"),
                tool_call("call_1", "read", r#"{"path":"README.md"}"#),
                text("再回答"),
            ],
            StopReason::ToolUse,
        );
        let before = message.clone();

        assert_eq!(text_of(&message), "先读取\n再回答");
        assert_eq!(message, before);
        assert_eq!(
            message.content[1],
            tool_call("call_1", "read", r#"{"path":"README.md"}"#)
        );
    });
}

#[test]
fn text_of_an_agent_message_is_the_text_of_the_message_it_wraps() {
    bounded(|| {
        let assistant = assistant_message(vec![text("a"), text("b")], StopReason::Stop);
        let wrapped = AgentMessage {
            role: Some(Role::Assistant(assistant)),
        };
        assert_eq!(text_of(&wrapped), "a\nb");
        let entry = TranscriptEntry {
            entry: Some(transcript_entry::Entry::Message(wrapped)),
            // A session file's message entry with nothing but its type and message.
            session_json: "{}".to_owned(),
            ..TranscriptEntry::default()
        };
        assert_eq!(text_of(&entry), "a\nb");

        let custom = AgentMessage {
            role: Some(Role::Custom(CustomMessage {
                role: "bashExecution".to_owned(),
                fields_json: r#"{"output":"ok"}"#.to_owned(),
            })),
        };
        assert_eq!(text_of(&custom), "");
        assert_eq!(text_of(&assistant_message(vec![], StopReason::Stop)), "");
    });
}

#[test]
fn text_of_a_system_message_is_its_content_without_sections_or_tools() {
    bounded(|| {
        let block = |text: &str| TextContent {
            text: text.to_owned(),
            ..Default::default()
        };
        let system = SystemMessage {
            content: vec![block("You are pi."), block("先读取文件。")],
            sections: vec![SystemSection {
                name: "skills".to_owned(),
                text: Some("- read".to_owned()),
            }],
            tools_added: vec![Tool {
                name: "read".to_owned(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let before = system.clone();
        assert_eq!(text_of(&system), "You are pi.\n先读取文件。");
        assert_eq!(system, before);
        assert_eq!(
            text_of(&AgentMessage::from(system)),
            "You are pi.\n先读取文件。"
        );
        assert_eq!(text_of(&AgentMessage::from(SystemMessage::default())), "");
    });
}
