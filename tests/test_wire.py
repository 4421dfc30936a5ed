"""Checked encoding and strict decoding of untrusted bytes."""

from __future__ import annotations

import pytest

import pi_proto as pp
from pi_proto.models.seed import readme_transcript


def test_encode_rejects_two_members_of_a_oneof_with_the_field_path() -> None:
    message = pp.assistant_message("ok")
    both = pp.AssistantContent(text=pp.text("a"))
    both.tool_call = pp.tool_call("call_1", "read")  # betterproto2 keeps `text` set as well
    message.content.append(both)
    with pytest.raises(pp.EncodeError, match=r"AgentMessage\.assistant\.content\[1\]: oneof 'block'.*text, tool_call"):
        pp.encode(pp.agent_message(message))


def test_encode_rejects_an_empty_oneof() -> None:
    with pytest.raises(pp.EncodeError, match=r"UserMessage\.content\[0\].*found none"):
        pp.encode(pp.UserMessage(content=[pp.UserContent()]))
    with pytest.raises(pp.EncodeError, match=r"^AgentMessage: oneof 'role'"):
        pp.encode(pp.AgentMessage())


def test_encode_names_the_field_of_a_wrongly_typed_value() -> None:
    message = pp.assistant_message(timestamp=1)
    message.model = 42  # type: ignore[assignment]
    with pytest.raises(pp.EncodeError, match=r"^AssistantMessage\.model: "):
        pp.encode(message)


def test_every_truncation_of_a_message_is_a_decode_error() -> None:
    for message in readme_transcript():
        data = pp.encode(message)
        for cut in range(1, len(data)):
            with pytest.raises(pp.DecodeError, match=rf"cannot decode AgentMessage from {cut} bytes"):
                pp.decode(pp.AgentMessage, data[:cut])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x0a\x05ab", "corrupt"),  # length beyond the end
        (b"\x12\x04\x1a\x02\xff\xfe", "UTF-8"),  # invalid UTF-8 in AssistantMessage.provider
        (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "corrupt"),  # overlong varint tag
    ],
)
def test_malformed_bytes_raise_one_clear_error(data: bytes, reason: str) -> None:
    with pytest.raises(pp.DecodeError, match=reason):
        pp.decode(pp.AgentMessage, data)


def test_a_wrongly_typed_field_stays_unknown_instead_of_corrupting_the_message() -> None:
    # Field 1 of TextContent is a string; here it arrives as a varint.
    data = b"\x08\x05"
    assert pp.decode(pp.TextContent, data).text == ""
    assert pp.encode(pp.decode(pp.TextContent, data)) == data
    assert pp.TextContent.parse(data).text == 5  # type: ignore[comparison-overlap]  # betterproto2 alone


def test_unknown_fields_survive_decode_and_encode() -> None:
    data = pp.encode(readme_transcript()[1])
    # Field 99 varint, field 100 bytes and field 101 fixed64, as a newer schema might add.
    extra = b"\x98\x06\x2a" + b"\xa2\x06\x03abc" + b"\xa9\x06" + bytes(range(8))
    decoded = pp.decode(pp.AgentMessage, data + extra)
    assert decoded == readme_transcript()[1]
    assert pp.encode(decoded) == data + extra


def test_unknown_fields_deep_inside_survive_decode_and_encode() -> None:
    # Field 99 inside the text block inside the first content entry of a user message.
    text = pp.encode(pp.TextContent(text="hi")) + b"\x98\x06\x2a"
    content = b"\x0a" + bytes([len(text)]) + text  # UserContent.text
    user = b"\x0a" + bytes([len(content)]) + content  # UserMessage.content
    data = b"\x0a" + bytes([len(user)]) + user  # AgentMessage.user
    decoded = pp.decode(pp.AgentMessage, data)
    assert pp.text_of(decoded) == "hi"
    assert pp.encode(decoded) == data


def test_decode_json_rejects_unknown_fields_and_bad_values() -> None:
    with pytest.raises(pp.DecodeError, match="nope"):
        pp.decode_json(pp.TextContent, '{"text": "a", "nope": 1}')
    with pytest.raises(pp.DecodeError, match="timestamp"):
        pp.decode_json(pp.UserMessage, '{"timestamp": "soon"}')
    with pytest.raises(pp.DecodeError):
        pp.decode_json(pp.UserMessage, "{")
