package io.github.piproto;

import com.google.protobuf.ByteString;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StreamRule;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.TextEndEvent;
import io.github.piproto.ai.v1.ThinkingContent;
import io.github.piproto.ai.v1.ThinkingEndEvent;
import io.github.piproto.ai.v1.ToolCall;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Applies a stream's events, in order, to the partial message they describe.
 *
 * <p>Models, the client and the tests share this one implementation, so a partial rebuilt from the
 * wire is the partial the sender had (the stream contract in service.proto, rule 4). It also
 * enforces the stream rules: an event that breaks one throws {@link StreamProtocolException} with
 * the event's index and the rule, and leaves the partial as it was. The rules are stated once, in
 * the schema (the {@code StreamRule} enum of {@code proto/pi/ai/v1/event.proto}); the receiver's
 * limit of {@code size-limit} is {@link #DEFAULT_MAX_MESSAGE_BYTES} unless told otherwise.
 *
 * <p>Messages are immutable, so the partial is kept as parts rather than as a message: the header,
 * each open block's text in a StringBuilder, and each finished block built once. Applying an event
 * costs the size of the event, never of the text received so far, so a stream costs linear time in
 * its length. {@link #partial()} builds the message only when asked, copying only the blocks that
 * changed since it was last built, and returns the same object until the next event changes it.
 * While a tool call's arguments stream, its partial holds the text so far in {@code raw_arguments}
 * and its completion into a JSON object ({@link PartialJson}, read incrementally) in {@code
 * arguments_json}. A non-terminal event that carries {@code usage} sets the partial's usage once
 * applied (a terminal event's message carries its own). A terminal event that carries a {@code
 * content_sha256} must carry the {@link Digest} of the partial's content as it stands when the
 * terminal event arrives (rule {@code terminal-digest}).
 *
 * <p>Not thread-safe: one stream applies its events from one thread at a time.
 */
public final class Accumulator {
  /**
   * The most bytes of UTF-8 a receiver accumulates from block events unless told otherwise: 64 MiB.
   */
  public static final long DEFAULT_MAX_MESSAGE_BYTES = 64L * 1024 * 1024;

  /** Each block's name in the details. */
  private static final Map<AssistantContent.BlockCase, String> BLOCK_NAMES =
      Map.of(
          AssistantContent.BlockCase.TEXT, "text",
          AssistantContent.BlockCase.THINKING, "thinking",
          AssistantContent.BlockCase.TOOL_CALL, "tool call");

  private final long maxMessageBytes;
  private long receivedBytes;
  private int count;
  private boolean started;

  /** The message's fields other than its content. */
  private AssistantMessage header = AssistantMessage.getDefaultInstance();

  private final List<Block> blocks = new ArrayList<>();

  /** The partial as last built; null once an event has changed it, until it is asked for. */
  private AssistantMessage snapshot = AssistantMessage.getDefaultInstance();

  /** How many times the partial was built: once per time it is asked for after a change. */
  int builds;

  public Accumulator() {
    this(DEFAULT_MAX_MESSAGE_BYTES);
  }

  /**
   * An accumulator that accepts at most {@code maxMessageBytes} bytes of UTF-8 from block events.
   */
  public Accumulator(long maxMessageBytes) {
    if (maxMessageBytes < 0) {
      throw new IllegalArgumentException("maxMessageBytes must not be negative");
    }
    this.maxMessageBytes = maxMessageBytes;
  }

  /** How many events have been applied, including any that broke a rule. */
  public int count() {
    return count;
  }

  /**
   * The message as rebuilt from the events applied so far, built now if an event has changed it
   * since it was last asked for. After a terminal event it is that event's message itself.
   */
  public AssistantMessage partial() {
    if (snapshot == null) {
      AssistantMessage.Builder message = header.toBuilder();
      for (Block block : blocks) {
        message.addContent(block.content());
      }
      snapshot = message.build();
      builds += 1;
    }
    return snapshot;
  }

  /**
   * Apply {@code event} to the partial. The event itself is left as it is: read the result with
   * {@link #partial()}.
   *
   * @throws StreamProtocolException if the event breaks a rule; the partial is then unchanged
   */
  public void apply(ModelEvent event) {
    String kind = Events.eventKind(event);
    int index = count;
    count += 1;
    if (kind.isEmpty()) {
      throw new StreamProtocolException(
          index, StreamRule.STREAM_RULE_EVENT_KIND, "no event kind is set");
    }
    Rule rule = new Rule(index, kind);
    switch (event.getEventCase()) {
      case DONE -> finish(rule, ModelEvent.newBuilder().setDone(event.getDone()).build());
      case ERROR -> finish(rule, ModelEvent.newBuilder().setError(event.getError()).build());
      case START -> {
        if (started || index > 0) {
          throw rule.broken(
              started ? StreamRule.STREAM_RULE_START_ONCE : StreamRule.STREAM_RULE_START_FIRST,
              "start must be the first event");
        }
        started = true;
        replaceWith(event.getStart().getHeader());
      }
      default -> {
        if (!started) {
          throw rule.broken(StreamRule.STREAM_RULE_START_FIRST, "a stream opens with start");
        }
        applyBlock(rule, event);
      }
    }
    if (event.hasUsage() && !Events.isTerminal(event)) {
      header = header.toBuilder().setUsage(event.getUsage()).build(); // the sender's usage changed
      snapshot = null;
    }
  }

  /**
   * Make the message of a terminal event the partial without checking the rules a sender's terminal
   * event must pass: for an {@code error} built from this partial to end a failed stream, or an
   * event already checked by another accumulator.
   */
  public void close(ModelEvent event) {
    replaceWith(Events.terminalMessage(event));
  }

  private void applyBlock(Rule rule, ModelEvent event) {
    switch (event.getEventCase()) {
      case TEXT_START -> open(rule, event.getTextStart().getContentIndex(), Block.openText());
      case THINKING_START ->
          open(rule, event.getThinkingStart().getContentIndex(), Block.openThinking());
      case TOOLCALL_START -> {
        String id = event.getToolcallStart().getId();
        String name = event.getToolcallStart().getName();
        open(rule, event.getToolcallStart().getContentIndex(), Block.openToolCall(id, name));
      }
      case TEXT_DELTA ->
          append(
              rule,
              event.getTextDelta().getContentIndex(),
              AssistantContent.BlockCase.TEXT,
              event.getTextDelta().getDelta());
      case THINKING_DELTA ->
          append(
              rule,
              event.getThinkingDelta().getContentIndex(),
              AssistantContent.BlockCase.THINKING,
              event.getThinkingDelta().getDelta());
      case TOOLCALL_DELTA ->
          append(
              rule,
              event.getToolcallDelta().getContentIndex(),
              AssistantContent.BlockCase.TOOL_CALL,
              event.getToolcallDelta().getDelta());
      case TEXT_END -> endText(rule, event.getTextEnd());
      case THINKING_END -> endThinking(rule, event.getThinkingEnd());
      case TOOLCALL_END -> {
        int at = event.getToolcallEnd().getContentIndex();
        Block block = openBlock(rule, at, AssistantContent.BlockCase.TOOL_CALL);
        ToolCall call = event.getToolcallEnd().getToolCall(); // the empty call when unset
        String startedAs = block.toolCallId();
        if (!call.getId().equals(startedAs)) {
          throw rule.broken(
              StreamRule.STREAM_RULE_TOOL_CALL_ID,
              "tool call %d started with id \"%s\" but ends with \"%s\""
                  .formatted(unsigned(at), startedAs, call.getId()));
        }
        // The call replaces the streamed one: only what it holds beyond that counts again.
        count(rule, Math.max(0, callSize(call) - block.counted));
        block.end(AssistantContent.newBuilder().setToolCall(call).build());
      }
      default -> throw new IllegalStateException("not a block event: " + rule.kind);
    }
    snapshot = null;
  }

  private void open(Rule rule, int contentIndex, Block block) {
    if (unsigned(contentIndex) != blocks.size()) {
      throw rule.broken(
          StreamRule.STREAM_RULE_NEXT_INDEX,
          "content_index %d must open the next block, %d"
              .formatted(unsigned(contentIndex), blocks.size()));
    }
    count(rule, block.counted); // a tool call's id and name
    blocks.add(block);
  }

  private void append(Rule rule, int contentIndex, AssistantContent.BlockCase kind, String delta) {
    Block block = openBlock(rule, contentIndex, kind);
    long size = utf8Length(delta);
    count(rule, size);
    block.counted += size;
    block.append(delta);
  }

  /** Count {@code size} more bytes toward the limit, or refuse the event, counting nothing. */
  private void count(Rule rule, long size) {
    long total = receivedBytes + size;
    if (total > maxMessageBytes) {
      throw rule.broken(
          StreamRule.STREAM_RULE_SIZE_LIMIT,
          "the block events add up to %d bytes, more than the limit of %d"
              .formatted(total, maxMessageBytes));
    }
    receivedBytes = total;
  }

  /**
   * The bytes a tool call holds: the UTF-8 of its strings, and any fields the schema does not know.
   */
  private static long callSize(ToolCall call) {
    return utf8Length(call.getId())
        + utf8Length(call.getName())
        + utf8Length(call.getArgumentsJson())
        + utf8Length(call.getRawArguments())
        + utf8Length(call.getThoughtSignature())
        + utf8Length(call.getExtraJson())
        + call.getUnknownFields().getSerializedSize();
  }

  /** The open block at {@code contentIndex}, which must be of {@code kind}. */
  private Block openBlock(Rule rule, int contentIndex, AssistantContent.BlockCase kind) {
    long at = unsigned(contentIndex);
    if (at >= blocks.size()) {
      throw rule.broken(
          StreamRule.STREAM_RULE_BLOCK_EXISTS,
          "content_index %d refers to no block (the message has %d)".formatted(at, blocks.size()));
    }
    Block block = blocks.get((int) at);
    if (block.kind() != kind) {
      throw rule.broken(
          StreamRule.STREAM_RULE_BLOCK_KIND,
          "block %d is not a %s block".formatted(at, BLOCK_NAMES.get(kind)));
    }
    if (!block.isOpen()) {
      throw rule.broken(StreamRule.STREAM_RULE_BLOCK_OPEN, "block " + at + " has already ended");
    }
    return block;
  }

  private void endText(Rule rule, TextEndEvent end) {
    Block block = openBlock(rule, end.getContentIndex(), AssistantContent.BlockCase.TEXT);
    count(rule, utf8Length(end.getTextSignature()));
    TextContent.Builder text = block.content().getText().toBuilder();
    if (end.hasTextSignature()) {
      text.setTextSignature(end.getTextSignature());
    }
    block.end(AssistantContent.newBuilder().setText(text).build());
  }

  private void endThinking(Rule rule, ThinkingEndEvent end) {
    Block block = openBlock(rule, end.getContentIndex(), AssistantContent.BlockCase.THINKING);
    count(rule, utf8Length(end.getThinkingSignature()));
    ThinkingContent.Builder thinking = block.content().getThinking().toBuilder();
    if (end.hasThinkingSignature()) {
      thinking.setThinkingSignature(end.getThinkingSignature());
    }
    if (end.hasRedacted()) {
      thinking.setRedacted(end.getRedacted());
    }
    block.end(AssistantContent.newBuilder().setThinking(thinking).build());
  }

  /** Check a terminal event, without any partial it came with, and make its message the partial. */
  private void finish(Rule rule, ModelEvent terminal) {
    List<Violation> broken = Validation.violations(terminal);
    if (!broken.isEmpty()) {
      String detail = broken.stream().map(Violation::toString).collect(Collectors.joining("; "));
      throw rule.broken(StreamRule.STREAM_RULE_TERMINAL_VALID, detail, broken);
    }
    AssistantMessage message = Events.terminalMessage(terminal);
    if (started) {
      List<String> streamed = blocks.stream().map(block -> memberName(block.kind())).toList();
      List<String> result =
          message.getContentList().stream()
              .map(content -> memberName(content.getBlockCase()))
              .toList();
      if (!streamed.equals(result)) {
        throw rule.broken(
            StreamRule.STREAM_RULE_TERMINAL_AGREES,
            "the message has blocks %s, the stream built %s".formatted(result, streamed));
      }
    }
    ByteString digest = terminalDigest(terminal);
    if (!digest.isEmpty()
        && !MessageDigest.isEqual(
            Digest.contentSha256(partial().getContentList()), digest.toByteArray())) {
      throw rule.broken(
          StreamRule.STREAM_RULE_TERMINAL_DIGEST,
          "content_sha256 is not the digest of the content the stream's events built");
    }
    replaceWith(message);
  }

  /** The content_sha256 of a terminal event; empty when it gives none. */
  private static ByteString terminalDigest(ModelEvent terminal) {
    return terminal.hasDone()
        ? terminal.getDone().getContentSha256()
        : terminal.getError().getContentSha256();
  }

  /** Make {@code message} the partial, its blocks all ended. */
  private void replaceWith(AssistantMessage message) {
    header = message.toBuilder().clearContent().build();
    blocks.clear();
    for (AssistantContent content : message.getContentList()) {
      blocks.add(Block.ended(content));
    }
    snapshot = message;
  }

  /** The proto field name of a block; "none" when unset. */
  private static String memberName(AssistantContent.BlockCase kind) {
    return switch (kind) {
      case TEXT -> "text";
      case THINKING -> "thinking";
      case TOOL_CALL -> "tool_call";
      default -> "none";
    };
  }

  /** content_index is a uint32 on the wire; Java reads it into a signed int. */
  private static long unsigned(int contentIndex) {
    return Integer.toUnsignedLong(contentIndex);
  }

  /** The length of {@code text} in UTF-8, without encoding it; a lone surrogate counts 3. */
  static long utf8Length(String text) {
    long bytes = text.length();
    for (int at = 0; at < text.length(); at++) {
      char unit = text.charAt(at);
      if (unit >= 0x80) {
        if (unit < 0x800) {
          bytes += 1;
        } else if (Character.isHighSurrogate(unit)
            && at + 1 < text.length()
            && Character.isLowSurrogate(text.charAt(at + 1))) {
          bytes += 2; // two units, four bytes
          at += 1;
        } else {
          bytes += 2;
        }
      }
    }
    return bytes;
  }

  /** Builds the errors of one event, each naming the event's kind and the rule. */
  private record Rule(int index, String kind) {
    StreamProtocolException broken(StreamRule rule, String detail) {
      return broken(rule, detail, List.of());
    }

    StreamProtocolException broken(StreamRule rule, String detail, List<Violation> violations) {
      return new StreamProtocolException(index, rule, kind + ": " + detail, violations);
    }
  }

  /**
   * One block of the partial. An open block keeps the text received so far: text or reasoning in a
   * StringBuilder, tool-call arguments in a {@link PartialJson} that also completes them; an ended
   * block is a finished AssistantContent.
   */
  private static final class Block {
    /** The block without its streamed text while open; the finished block once ended. */
    private AssistantContent content;

    private boolean open;
    private final StringBuilder received; // text and thinking
    private final PartialJson arguments; // tool calls

    /** For an open block: what it is as of now, once built; null when a delta changed it since. */
    private AssistantContent built;

    /** The bytes its start and deltas counted toward the limit. */
    long counted;

    private Block(AssistantContent content, boolean open) {
      this.content = content;
      this.open = open;
      boolean toolCall = content.getBlockCase() == AssistantContent.BlockCase.TOOL_CALL;
      this.received = open && !toolCall ? new StringBuilder() : null;
      this.arguments = open && toolCall ? new PartialJson() : null;
    }

    static Block ended(AssistantContent content) {
      return new Block(content, false);
    }

    static Block openText() {
      return new Block(
          AssistantContent.newBuilder().setText(TextContent.getDefaultInstance()).build(), true);
    }

    static Block openThinking() {
      return new Block(
          AssistantContent.newBuilder().setThinking(ThinkingContent.getDefaultInstance()).build(),
          true);
    }

    static Block openToolCall(String id, String name) {
      ToolCall call = ToolCall.newBuilder().setId(id).setName(name).build();
      Block block = new Block(AssistantContent.newBuilder().setToolCall(call).build(), true);
      block.counted = utf8Length(id) + utf8Length(name);
      return block;
    }

    AssistantContent.BlockCase kind() {
      return content.getBlockCase();
    }

    String toolCallId() {
      return content.getToolCall().getId();
    }

    boolean isOpen() {
      return open;
    }

    void append(String delta) {
      built = null;
      if (arguments != null) {
        arguments.append(delta);
      } else {
        received.append(delta);
      }
    }

    void end(AssistantContent finished) {
      content = finished;
      open = false;
      built = null;
    }

    /**
     * The block as of now: an open block gets a copy of its text so far; an open tool call holds
     * its arguments so far in {@code raw_arguments}, and their completion into a JSON object in
     * {@code arguments_json} (contract rule 2). Built once per change, when first asked for.
     */
    AssistantContent content() {
      if (!open) {
        return content;
      }
      if (built == null) {
        built = build();
      }
      return built;
    }

    private AssistantContent build() {
      return switch (content.getBlockCase()) {
        case TEXT ->
            content.toBuilder()
                .setText(content.getText().toBuilder().setText(received.toString()))
                .build();
        case THINKING ->
            content.toBuilder()
                .setThinking(content.getThinking().toBuilder().setThinking(received.toString()))
                .build();
        default ->
            content.toBuilder()
                .setToolCall(
                    content.getToolCall().toBuilder()
                        .setArgumentsJson(arguments.completed())
                        .setRawArguments(arguments.text()))
                .build();
      };
    }
  }
}
