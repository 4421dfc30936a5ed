package io.github.piproto;

/**
 * One broken rule of a message: where, which rule, and what is wrong.
 *
 * @param fieldPath the offending field's path from the checked message, field names joined by dots
 *     with list indexes in brackets, e.g. {@code context.messages[2].assistant.content[1].block}; a
 *     oneof that must have a member is named by the oneof, a rule of a whole message by that
 *     message's path ("" for the checked message itself)
 * @param ruleId the rule's id: a protovalidate standard rule ({@code string.min_len}, {@code
 *     required}), a CEL rule of the schema ({@code done.reason_matches_message}) or a JSON text
 *     rule ({@code json.syntax}, {@code json.number}, {@code json.depth}, {@code json.object})
 * @param detail what is wrong, in words
 */
public record Violation(String fieldPath, String ruleId, String detail) {
  @Override
  public String toString() {
    return (fieldPath.isEmpty() ? "the message" : fieldPath) + ": " + detail + " [" + ruleId + "]";
  }
}
