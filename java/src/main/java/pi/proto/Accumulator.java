package pi.proto;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import pi.ai.v1.Content.AssistantContent;
import pi.ai.v1.Content.TextContent;
import pi.ai.v1.Content.ThinkingContent;
import pi.ai.v1.Content.ToolCall;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Event.TextEndEvent;
import pi.ai.v1.Event.ThinkingEndEvent;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;

/**
 * Applies a stream's events, in order, to the partial message they describe.
 *
 * <p>Models, the client and the tests share this one implementation, so a partial rebuilt from the
 * wire is the partial the sender had (the stream contract in service.proto, rule 4). It also
 * enforces the event-sequence rules of the Python runtime, rule for rule and message for message;
 * an event that breaks one throws {@link StreamProtocolException} naming the event's index and the
 * rule:
 *
 * <ul>
 *   <li>{@code event-kind}: an event has exactly one kind set.
 *   <li>{@code start-first}: a stream opens with {@code start} (a call that failed before it
 *       started may consist of its terminal event alone); {@code start-once}: there is only one.
 *   <li>{@code next-index}: a {@code *_start} event opens the next index of the content.
 *   <li>{@code block-exists}, {@code block-kind}, {@code block-open}: a delta or end event refers
 *       to a block that exists, of its own kind, and not yet ended; {@code tool-call-id}: a tool
 *       call ends with the id it started with.
 *   <li>{@code terminal-message}: a {@code done} or {@code error} event carries a message; {@code
 *       terminal-reason}: {@code done} has STOP, LENGTH or TOOL_USE and {@code error} has ERROR or
 *       ABORTED, equal to the message's stop reason; {@code terminal-agrees}: the message has the
 *       blocks that were streamed, in number and kind; {@code message-valid}: the message passes
 *       {@link MessageRules#checkAssistant}.
 * </ul>
 *
 * <p>Messages are immutable, so the partial is kept as parts rather than as a message: the header,
 * each open block's text in a StringBuilder, and each finished block built once. Applying an event
 * costs the size of the event, never of the text received so far, so a stream costs linear time
 * in its length. {@link #partial()} builds the message only when asked, at the cost of one copy of
 * it, and returns the same object until the next event changes it.
 *
 * <p>Not thread-safe: one stream applies its events from one thread at a time.
 */
public final class Accumulator {
  private static final List<Integer> DONE_REASONS =
      List.of(
          StopReason.STOP_REASON_STOP_VALUE,
          StopReason.STOP_REASON_LENGTH_VALUE,
          StopReason.STOP_REASON_TOOL_USE_VALUE);
  private static final List<Integer> ERROR_REASONS =
      List.of(StopReason.STOP_REASON_ERROR_VALUE, StopReason.STOP_REASON_ABORTED_VALUE);

  /** Each block's name in the messages. */
  private static final Map<AssistantContent.BlockCase, String> BLOCK_NAMES =
      Map.of(
          AssistantContent.BlockCase.TEXT, "text",
          AssistantContent.BlockCase.THINKING, "thinking",
          AssistantContent.BlockCase.TOOL_CALL, "tool call");

  private final Limits limits;
  private int count;
  private boolean started;

  /** The message's fields other than its content. */
  private AssistantMessage header = AssistantMessage.getDefaultInstance();

  private final List<Block> blocks = new ArrayList<>();

  /** The partial as last built; null once an event has changed it, until it is asked for. */
  private AssistantMessage snapshot = AssistantMessage.getDefaultInstance();

  public Accumulator() {
    this(Limits.DEFAULT);
  }

  public Accumulator(Limits limits) {
    this.limits = limits;
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
    String kind = Events.kindOf(event);
    int index = count;
    count += 1;
    if (kind.isEmpty()) {
      throw new StreamProtocolException(
          "event " + index + " breaks rule 'event-kind': no event kind is set");
    }
    Rule rule = new Rule(index, kind);
    switch (event.getEventCase()) {
      case DONE ->
          finish(
              rule,
              event.getDone().getReasonValue(),
              event.getDone().hasMessage() ? event.getDone().getMessage() : null);
      case ERROR ->
          finish(
              rule,
              event.getError().getReasonValue(),
              event.getError().hasMessage() ? event.getError().getMessage() : null);
      case START -> {
        if (started || index > 0) {
          throw rule.broken(
              started ? "start-once" : "start-first", "start must be the first event");
        }
        started = true;
        replaceWith(event.getStart().getHeader());
      }
      default -> {
        if (!started) {
          throw rule.broken("start-first", "a stream opens with start");
        }
        applyBlock(rule, event);
      }
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
      case TOOLCALL_START ->
          open(
              rule,
              event.getToolcallStart().getContentIndex(),
              Block.openToolCall(
                  event.getToolcallStart().getId(), event.getToolcallStart().getName()));
      case TEXT_DELTA ->
          openBlock(rule, event.getTextDelta().getContentIndex(), AssistantContent.BlockCase.TEXT)
              .append(event.getTextDelta().getDelta());
      case THINKING_DELTA ->
          openBlock(
                  rule,
                  event.getThinkingDelta().getContentIndex(),
                  AssistantContent.BlockCase.THINKING)
              .append(event.getThinkingDelta().getDelta());
      case TOOLCALL_DELTA ->
          openBlock(
                  rule,
                  event.getToolcallDelta().getContentIndex(),
                  AssistantContent.BlockCase.TOOL_CALL)
              .append(event.getToolcallDelta().getDelta());
      case TEXT_END -> endText(rule, event.getTextEnd());
      case THINKING_END -> endThinking(rule, event.getThinkingEnd());
      case TOOLCALL_END -> {
        int at = event.getToolcallEnd().getContentIndex();
        Block block = openBlock(rule, at, AssistantContent.BlockCase.TOOL_CALL);
        ToolCall call = event.getToolcallEnd().getToolCall(); // the empty call when unset
        String startedAs = block.toolCallId();
        if (!call.getId().equals(startedAs)) {
          throw rule.broken(
              "tool-call-id",
              "tool call %d started as %s but ends as %s"
                  .formatted(
                      unsigned(at), PythonText.repr(startedAs), PythonText.repr(call.getId())));
        }
        block.end(AssistantContent.newBuilder().setToolCall(call).build());
      }
      default -> throw new IllegalStateException("not a block event: " + rule.kind);
    }
    snapshot = null;
  }

  private void open(Rule rule, int contentIndex, Block block) {
    if (unsigned(contentIndex) != blocks.size()) {
      throw rule.broken(
          "next-index",
          "content_index %d must open the next block, %d"
              .formatted(unsigned(contentIndex), blocks.size()));
    }
    blocks.add(block);
  }

  /** The open block at {@code contentIndex}, which must be of {@code kind}. */
  private Block openBlock(Rule rule, int contentIndex, AssistantContent.BlockCase kind) {
    long at = unsigned(contentIndex);
    if (at >= blocks.size()) {
      throw rule.broken(
          "block-exists",
          "content_index %d refers to no block (the message has %d)".formatted(at, blocks.size()));
    }
    Block block = blocks.get((int) at);
    if (block.kind() != kind) {
      throw rule.broken(
          "block-kind", "block %d is not a %s block".formatted(at, BLOCK_NAMES.get(kind)));
    }
    if (!block.isOpen()) {
      throw rule.broken("block-open", "block " + at + " has already ended");
    }
    return block;
  }

  private void endText(Rule rule, TextEndEvent end) {
    Block block = openBlock(rule, end.getContentIndex(), AssistantContent.BlockCase.TEXT);
    TextContent.Builder text = block.content().getText().toBuilder();
    if (end.hasTextSignature()) {
      text.setTextSignature(end.getTextSignature());
    }
    block.end(AssistantContent.newBuilder().setText(text).build());
  }

  private void endThinking(Rule rule, ThinkingEndEvent end) {
    Block block = openBlock(rule, end.getContentIndex(), AssistantContent.BlockCase.THINKING);
    ThinkingContent.Builder thinking = block.content().getThinking().toBuilder();
    if (end.hasThinkingSignature()) {
      thinking.setThinkingSignature(end.getThinkingSignature());
    }
    if (end.hasRedacted()) {
      thinking.setRedacted(end.getRedacted());
    }
    block.end(AssistantContent.newBuilder().setThinking(thinking).build());
  }

  private void finish(Rule rule, int reason, AssistantMessage message) {
    if (message == null) {
      throw rule.broken("terminal-message", "carries no message");
    }
    List<Integer> allowed = rule.kind.equals("done") ? DONE_REASONS : ERROR_REASONS;
    if (!allowed.contains(reason) || message.getStopReasonValue() != reason) {
      String names =
          allowed.stream().map(Accumulator::reasonName).collect(Collectors.joining(", "));
      throw rule.broken(
          "terminal-reason",
          "reason %s with a message stopped by %s; %s takes %s, equal in both"
              .formatted(
                  reasonName(reason), reasonName(message.getStopReasonValue()), rule.kind, names));
    }
    if (started) {
      List<String> streamed = blocks.stream().map(block -> memberName(block.kind())).toList();
      List<String> result =
          message.getContentList().stream()
              .map(content -> memberName(content.getBlockCase()))
              .toList();
      if (!streamed.equals(result)) {
        throw rule.broken(
            "terminal-agrees",
            "the message has blocks %s, the stream built %s"
                .formatted(PythonText.list(result), PythonText.list(streamed)));
      }
    }
    try {
      MessageRules.checkAssistant(message, "message", limits);
    } catch (ValidationException error) {
      throw rule.broken("message-valid", error.getMessage());
    }
    replaceWith(message);
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

  /** The proto field name of a block, as the Python runtime lists them; "none" when unset. */
  private static String memberName(AssistantContent.BlockCase kind) {
    return switch (kind) {
      case TEXT -> "text";
      case THINKING -> "thinking";
      case TOOL_CALL -> "tool_call";
      default -> "none";
    };
  }

  /** A stop reason's name without the enum prefix, e.g. TOOL_USE; its number when unknown. */
  static String reasonName(int reason) {
    StopReason known = StopReason.forNumber(reason);
    return known == null
        ? Integer.toString(reason)
        : known.name().substring("STOP_REASON_".length());
  }

  /** content_index is a uint32 on the wire; Java reads it into a signed int. */
  private static long unsigned(int contentIndex) {
    return Integer.toUnsignedLong(contentIndex);
  }

  /** Builds the errors of one event, each naming the event's index and kind and the rule. */
  private record Rule(int index, String kind) {
    StreamProtocolException broken(String rule, String detail) {
      return new StreamProtocolException(
          "event %d (%s) breaks rule '%s': %s".formatted(index, kind, rule, detail));
    }
  }

  /**
   * One block of the partial. An open block keeps the text received so far (text, reasoning or raw
   * tool-call arguments) in a StringBuilder; an ended block is a finished AssistantContent.
   */
  private static final class Block {
    /** The block without its streamed text while open; the finished block once ended. */
    private AssistantContent content;

    private StringBuilder received;

    private Block(AssistantContent content, StringBuilder received) {
      this.content = content;
      this.received = received;
    }

    static Block ended(AssistantContent content) {
      return new Block(content, null);
    }

    static Block openText() {
      return new Block(
          AssistantContent.newBuilder().setText(TextContent.getDefaultInstance()).build(),
          new StringBuilder());
    }

    static Block openThinking() {
      return new Block(
          AssistantContent.newBuilder().setThinking(ThinkingContent.getDefaultInstance()).build(),
          new StringBuilder());
    }

    /** While its arguments stream, a tool call holds "{}" in arguments_json (contract rule 2). */
    static Block openToolCall(String id, String name) {
      ToolCall call =
          ToolCall.newBuilder()
              .setId(id)
              .setName(name)
              .setArgumentsJson("{}")
              .setRawArguments("")
              .build();
      return new Block(
          AssistantContent.newBuilder().setToolCall(call).build(), new StringBuilder());
    }

    AssistantContent.BlockCase kind() {
      return content.getBlockCase();
    }

    String toolCallId() {
      return content.getToolCall().getId();
    }

    boolean isOpen() {
      return received != null;
    }

    void append(String delta) {
      received.append(delta);
    }

    void end(AssistantContent finished) {
      content = finished;
      received = null;
    }

    /** The block as of now: an open block gets a copy of its text so far. */
    AssistantContent content() {
      if (received == null) {
        return content;
      }
      String text = received.toString();
      return switch (content.getBlockCase()) {
        case TEXT ->
            content.toBuilder().setText(content.getText().toBuilder().setText(text)).build();
        case THINKING ->
            content.toBuilder()
                .setThinking(content.getThinking().toBuilder().setThinking(text))
                .build();
        default ->
            content.toBuilder()
                .setToolCall(content.getToolCall().toBuilder().setRawArguments(text))
                .build();
      };
    }
  }
}
