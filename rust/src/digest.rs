//! The digest a terminal event carries of the content its stream built
//! (`DoneEvent.content_sha256`, `ErrorEvent.content_sha256`; rule `terminal-digest`).

use sha2::{Digest, Sha256};

use crate::v1::AssistantContent;

/// SHA-256 of the encoding of an `AssistantMessage` holding only `content`: what the sender and
/// every receiver compute alike, since each block's fields are written in field-number order.
pub fn content_sha256(content: &[AssistantContent]) -> [u8; 32] {
    // AssistantMessage.content is field 1: the message's encoding is each block as a field 1,
    // so it is written without building the message (which would copy the content).
    let mut encoded =
        Vec::with_capacity(prost::encoding::message::encoded_len_repeated(1, content));
    for block in content {
        prost::encoding::message::encode(1, block, &mut encoded);
    }
    Sha256::digest(&encoded).into()
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use prost::Message;

    use super::*;
    use crate::v1::assistant_content::Block;
    use crate::v1::{AssistantMessage, TextContent, ToolCall};

    fn text(text: &str) -> AssistantContent {
        AssistantContent {
            block: Some(Block::Text(TextContent {
                text: text.to_owned(),
                ..Default::default()
            })),
        }
    }

    #[test]
    fn the_digest_is_of_the_message_holding_only_the_content() {
        let content = vec![
            text("Hello, world"),
            AssistantContent {
                block: Some(Block::ToolCall(ToolCall {
                    id: "call_1".to_owned(),
                    name: "read".to_owned(),
                    arguments_json: Some("{}".to_owned()),
                    extra_json: r#"{"x":1}"#.to_owned(),
                    namespace: Some("fs".to_owned()),
                    ..Default::default()
                })),
            },
        ];
        let message = AssistantMessage {
            content: content.clone(),
            ..Default::default()
        };
        let expected: [u8; 32] = Sha256::digest(message.encode_to_vec()).into();
        assert_eq!(content_sha256(&content), expected);
        assert_ne!(content_sha256(&content[..1]), expected);
    }

    #[test]
    fn the_digest_is_the_one_every_sender_computes() {
        // The digest of a text block "Hello, world" in the conformance corpus.
        let corpus = STANDARD
            .decode("4neC0P5vvmFOX7GfuEtvAtP92M6zjfvlFWg903GftrA=")
            .expect("base64");
        assert_eq!(content_sha256(&[text("Hello, world")]).as_slice(), corpus);
        assert_ne!(content_sha256(&[text("Hello, world!")]).as_slice(), corpus);
    }
}
