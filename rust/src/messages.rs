//! Building and reading messages: `user_message`, the `AgentMessage` conversions, and `text_of`,
//! the text of a message for display, search and summaries.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::v1::agent_message::Role;
use crate::v1::{
    AgentMessage, AssistantMessage, Cost, SystemMessage, TextContent, ToolResultMessage,
    TranscriptEntry, Usage, UserContent, UserMessage, assistant_content, tool_result_content,
    transcript_entry, user_content,
};

/// A user message holding one text block, timestamped now.
pub fn user_message(text: &str) -> UserMessage {
    let block = user_content::Block::Text(TextContent {
        text: text.to_owned(),
        ..Default::default()
    });
    UserMessage {
        content: vec![UserContent { block: Some(block) }],
        timestamp: Some(now_ms()),
        ..Default::default()
    }
}

/// pi's usage before anything is counted: every count and amount set to 0, as pi's `Usage`
/// always has them all (an unset one would be left out of pi-JSON).
pub fn zero_usage() -> Usage {
    Usage {
        input: Some(0),
        output: Some(0),
        cache_read: Some(0),
        cache_write: Some(0),
        total_tokens: Some(0),
        cost: Some(Cost {
            input: Some(0.0),
            output: Some(0.0),
            cache_read: Some(0.0),
            cache_write: Some(0.0),
            total: Some(0.0),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Milliseconds since the Unix epoch, the unit of every timestamp in pi.ai.v1.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

impl From<SystemMessage> for AgentMessage {
    fn from(message: SystemMessage) -> Self {
        Self {
            role: Some(Role::System(message)),
        }
    }
}

impl From<UserMessage> for AgentMessage {
    fn from(message: UserMessage) -> Self {
        Self {
            role: Some(Role::User(message)),
        }
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(message: AssistantMessage) -> Self {
        Self {
            role: Some(Role::Assistant(message)),
        }
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(message: ToolResultMessage) -> Self {
        Self {
            role: Some(Role::ToolResult(message)),
        }
    }
}

/// A message whose content has text blocks.
pub trait TextBlocks {
    /// The text of each text block, in order; other blocks are skipped.
    fn text_blocks(&self) -> Vec<&str>;
}

/// The message's text blocks joined with newlines, in order; other blocks are skipped.
///
/// A lossy projection: the message itself is left untouched.
pub fn text_of(message: &impl TextBlocks) -> String {
    message.text_blocks().join("\n")
}

impl TextBlocks for SystemMessage {
    fn text_blocks(&self) -> Vec<&str> {
        self.content.iter().map(|text| text.text.as_str()).collect()
    }
}

impl TextBlocks for AssistantMessage {
    fn text_blocks(&self) -> Vec<&str> {
        self.content
            .iter()
            .filter_map(|content| match &content.block {
                Some(assistant_content::Block::Text(text)) => Some(text.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl TextBlocks for UserMessage {
    fn text_blocks(&self) -> Vec<&str> {
        self.content
            .iter()
            .filter_map(|content| match &content.block {
                Some(user_content::Block::Text(text)) => Some(text.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl TextBlocks for ToolResultMessage {
    fn text_blocks(&self) -> Vec<&str> {
        self.content
            .iter()
            .filter_map(|content| match &content.block {
                Some(tool_result_content::Block::Text(text)) => Some(text.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl TextBlocks for AgentMessage {
    fn text_blocks(&self) -> Vec<&str> {
        match &self.role {
            Some(Role::System(message)) => message.text_blocks(),
            Some(Role::User(message)) => message.text_blocks(),
            Some(Role::Assistant(message)) => message.text_blocks(),
            Some(Role::ToolResult(message)) => message.text_blocks(),
            // Custom messages are kept verbatim, not modelled: no text blocks.
            Some(Role::Custom(_)) | None => Vec::new(),
        }
    }
}

impl TextBlocks for TranscriptEntry {
    fn text_blocks(&self) -> Vec<&str> {
        match &self.entry {
            Some(transcript_entry::Entry::Message(message)) => message.text_blocks(),
            Some(
                transcript_entry::Entry::SessionEntry(_) | transcript_entry::Entry::UnparsedLine(_),
            )
            | None => Vec::new(),
        }
    }
}
