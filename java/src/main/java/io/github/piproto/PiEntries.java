package io.github.piproto;

import static io.github.piproto.PiJsonReader.at;
import static io.github.piproto.PiJsonReader.isString;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.protobuf.NullValue;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.BranchSummary;
import io.github.piproto.ai.v1.Compaction;
import io.github.piproto.ai.v1.ContentBlock;
import io.github.piproto.ai.v1.ContextEdit;
import io.github.piproto.ai.v1.ContextReplacement;
import io.github.piproto.ai.v1.CustomEntry;
import io.github.piproto.ai.v1.CustomMessageEntry;
import io.github.piproto.ai.v1.Label;
import io.github.piproto.ai.v1.ModelChange;
import io.github.piproto.ai.v1.SessionEntry;
import io.github.piproto.ai.v1.SessionEntry.BodyCase;
import io.github.piproto.ai.v1.SessionHeader;
import io.github.piproto.ai.v1.SessionInfo;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.ThinkingLevelChange;
import io.github.piproto.ai.v1.TranscriptEntry;
import io.github.piproto.ai.v1.TranscriptEntryOrBuilder;
import io.github.piproto.ai.v1.UsageRecord;
import io.github.piproto.ai.v1.UserContent;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The lines of a pi session file, typed: a bare pi-JSON message, a {@code message} entry, the
 * session header and every entry type pi-coding-agent defines (a model change, a compaction, a
 * label, ...), each line's {@code id}, {@code parentId} and {@code timestamp} on its {@link
 * TranscriptEntry} so the session's tree can be walked without reading JSON. A message entry's
 * unmodelled keys are its {@code session_json}; an entry of a type without a body keeps its other
 * keys in {@link SessionEntry#getFieldsJson}. Each type's keys are written in the order pi's
 * session manager writes them, which the schema gives as the {@code modelled_keys} of the body's
 * {@code extra_json} ({@link PiKeyOrder}). The messages inside are {@link PiMessageReader}'s and
 * {@link PiMessageWriter}'s.
 */
final class PiEntries {
  /** A typed entry type: pi's name for it, the member of SessionEntry's body, its keys. */
  private record Body(String type, BodyCase member, PiKeyOrder keys) {
    /** The body's {@code extra_json}, named for errors. */
    String extraField() {
      return SessionEntry.getDescriptor()
              .findFieldByNumber(member.getNumber())
              .getMessageType()
              .getName()
          + ".extra_json";
    }
  }

  private static final List<Body> BODIES =
      List.of(
          new Body("session", BodyCase.HEADER, PiKeyOrder.SESSION_HEADER),
          new Body(
              "thinking_level_change",
              BodyCase.THINKING_LEVEL_CHANGE,
              PiKeyOrder.THINKING_LEVEL_CHANGE),
          new Body("model_change", BodyCase.MODEL_CHANGE, PiKeyOrder.MODEL_CHANGE),
          new Body("usage", BodyCase.USAGE, PiKeyOrder.USAGE_RECORD),
          new Body("compaction", BodyCase.COMPACTION, PiKeyOrder.COMPACTION),
          new Body("branch_summary", BodyCase.BRANCH_SUMMARY, PiKeyOrder.BRANCH_SUMMARY),
          new Body("custom", BodyCase.CUSTOM, PiKeyOrder.CUSTOM_ENTRY),
          new Body("custom_message", BodyCase.CUSTOM_MESSAGE, PiKeyOrder.CUSTOM_MESSAGE_ENTRY),
          new Body("label", BodyCase.LABEL, PiKeyOrder.LABEL),
          new Body("session_info", BodyCase.SESSION_INFO, PiKeyOrder.SESSION_INFO),
          new Body("context_edit", BodyCase.CONTEXT_EDIT, PiKeyOrder.CONTEXT_EDIT));

  private static final Map<String, Body> BY_TYPE = new HashMap<>();
  private static final Map<BodyCase, Body> BY_MEMBER = new EnumMap<>(BodyCase.class);

  static {
    for (Body body : BODIES) {
      BY_TYPE.put(body.type(), body);
      BY_MEMBER.put(body.member(), body);
    }
    if (BY_MEMBER.size() != BodyCase.values().length - 1) {
      throw new IllegalStateException("a member of SessionEntry.body has no entry type here");
    }
  }

  private PiEntries() {}

  // --- reading -----------------------------------------------------------------------------------

  /** One line of a pi session file, or one bare pi-JSON message. */
  static TranscriptEntry read(JsonElement value, String where) {
    if (!value.isJsonObject()) {
      throw new PiJsonException(where, "expected an object, got " + PiJsonReader.typeName(value));
    }
    JsonObject line = value.getAsJsonObject();
    if (line.has("role")) {
      return TranscriptEntry.newBuilder().setMessage(PiMessageReader.message(value, where)).build();
    }
    JsonElement kind = line.get("type");
    if (isString(kind, "message") && line.has("message")) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.MESSAGE_ENTRY);
      AgentMessage message = PiMessageReader.message(line.get("message"), at(where, "message"));
      TranscriptEntry.Builder entry = placed(read).setMessage(message);
      String extra = read.extraJson();
      // "{}" tells an entry with nothing but its type and message from a bare message.
      boolean envelope = isPlaced(entry) || entry.hasTimestamp();
      return entry.setSessionJson(extra.isEmpty() && !envelope ? "{}" : extra).build();
    }
    if (!isString(kind) || kind.getAsString().isEmpty()) {
      throw new PiJsonException(
          where, "neither a message (no 'role') nor a session entry (no 'type')");
    }
    String type = kind.getAsString();
    Body body = BY_TYPE.get(type);
    SessionEntry.Builder session = SessionEntry.newBuilder().setType(type);
    if (body == null) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.UNTYPED_ENTRY);
      TranscriptEntry.Builder entry = placed(read);
      return entry.setSessionEntry(session.setFieldsJson(read.extraJson())).build();
    }
    PiJsonReader read = new PiJsonReader(value, where, body.keys());
    TranscriptEntry.Builder entry = placed(read);
    switch (body.member()) {
      case HEADER -> session.setHeader(header(read));
      case THINKING_LEVEL_CHANGE -> session.setThinkingLevelChange(thinkingLevelChange(read));
      case MODEL_CHANGE -> session.setModelChange(modelChange(read));
      case USAGE -> session.setUsage(usageRecord(read));
      case COMPACTION -> session.setCompaction(compaction(read));
      case BRANCH_SUMMARY -> session.setBranchSummary(branchSummary(read));
      case CUSTOM -> session.setCustom(custom(read));
      case CUSTOM_MESSAGE -> session.setCustomMessage(customMessage(read));
      case LABEL -> session.setLabel(label(read));
      case SESSION_INFO -> session.setSessionInfo(sessionInfo(read));
      case CONTEXT_EDIT -> session.setContextEdit(contextEdit(read));
      case BODY_NOT_SET -> throw new IllegalStateException(type);
    }
    return entry.setSessionEntry(session).build();
  }

  /** An entry with the line's id, parent and timestamp, each where its type has it. */
  private static TranscriptEntry.Builder placed(PiJsonReader read) {
    read.string("type");
    TranscriptEntry.Builder entry = TranscriptEntry.newBuilder();
    JsonElement parent = read.get("parentId");
    if (read.models("parentId") && parent != null) {
      if (parent.isJsonNull()) {
        entry.setRoot(NullValue.NULL_VALUE); // pi's "parentId":null, a root of the tree
      } else {
        entry.setParentId(read.string("parentId"));
      }
    }
    if (read.models("id")) {
      read.optionalString("id").ifPresent(entry::setId);
    }
    if (read.models("timestamp")) {
      read.optionalString("timestamp").ifPresent(entry::setTimestamp);
    }
    return entry;
  }

  /** Whether the entry has a place in a session's tree: an id or a parent. */
  private static boolean isPlaced(TranscriptEntryOrBuilder entry) {
    return entry.hasId() || entry.getParentCase() != TranscriptEntry.ParentCase.PARENT_NOT_SET;
  }

  private static SessionHeader header(PiJsonReader read) {
    SessionHeader.Builder header = SessionHeader.newBuilder();
    read.optionalInteger("version").ifPresent(header::setVersion);
    read.optionalString("cwd").ifPresent(header::setCwd);
    read.optionalString("parentSession").ifPresent(header::setParentSession);
    return header.setExtraJson(read.extraJson()).build();
  }

  private static ThinkingLevelChange thinkingLevelChange(PiJsonReader read) {
    ThinkingLevelChange.Builder change = ThinkingLevelChange.newBuilder();
    read.optionalString("thinkingLevel").ifPresent(change::setThinkingLevel);
    return change.setExtraJson(read.extraJson()).build();
  }

  private static ModelChange modelChange(PiJsonReader read) {
    ModelChange.Builder change = ModelChange.newBuilder();
    read.optionalString("provider").ifPresent(change::setProvider);
    read.optionalString("modelId").ifPresent(change::setModelId);
    return change.setExtraJson(read.extraJson()).build();
  }

  private static UsageRecord usageRecord(PiJsonReader read) {
    UsageRecord.Builder record = UsageRecord.newBuilder();
    read.optionalString("kind").ifPresent(record::setKind);
    read.optionalString("provider").ifPresent(record::setProvider);
    read.optionalString("model").ifPresent(record::setModel);
    read.child("usage", PiMessageReader::usage).ifPresent(record::setUsage);
    read.optionalString("note").ifPresent(record::setNote);
    return record.setExtraJson(read.extraJson()).build();
  }

  private static Compaction compaction(PiJsonReader read) {
    Compaction.Builder compaction = Compaction.newBuilder();
    read.optionalString("summary").ifPresent(compaction::setSummary);
    read.optionalString("firstKeptEntryId").ifPresent(compaction::setFirstKeptEntryId);
    read.optionalInteger("tokensBefore").ifPresent(compaction::setTokensBefore);
    read.jsonText("details", false).ifPresent(compaction::setDetailsJson);
    read.child("usage", PiMessageReader::usage).ifPresent(compaction::setUsage);
    read.optionalBool("fromHook").ifPresent(compaction::setFromHook);
    read.child("systemMessage", PiMessageReader::system).ifPresent(compaction::setSystemMessage);
    return compaction.setExtraJson(read.extraJson()).build();
  }

  private static BranchSummary branchSummary(PiJsonReader read) {
    BranchSummary.Builder summary = BranchSummary.newBuilder();
    read.optionalString("fromId").ifPresent(summary::setFromId);
    read.optionalString("summary").ifPresent(summary::setSummary);
    read.jsonText("details", false).ifPresent(summary::setDetailsJson);
    read.child("usage", PiMessageReader::usage).ifPresent(summary::setUsage);
    read.optionalBool("fromHook").ifPresent(summary::setFromHook);
    return summary.setExtraJson(read.extraJson()).build();
  }

  private static CustomEntry custom(PiJsonReader read) {
    CustomEntry.Builder custom = CustomEntry.newBuilder();
    read.optionalString("customType").ifPresent(custom::setCustomType);
    read.jsonText("data", false).ifPresent(custom::setDataJson); // "null" for pi's data: null
    return custom.setExtraJson(read.extraJson()).build();
  }

  private static CustomMessageEntry customMessage(PiJsonReader read) {
    CustomMessageEntry.Builder custom = CustomMessageEntry.newBuilder();
    JsonElement content = read.get("content");
    if (isString(content)) {
      TextContent text = TextContent.newBuilder().setText(content.getAsString()).build();
      custom.addContent(UserContent.newBuilder().setText(text)).setStringContent(true);
    } else if (content != null) {
      custom.addAllContent(read.items("content", PiMessageReader::mediaBlock));
    }
    read.optionalString("customType").ifPresent(custom::setCustomType);
    read.optionalBool("display").ifPresent(custom::setDisplay);
    read.jsonText("details", false).ifPresent(custom::setDetailsJson);
    return custom.setExtraJson(read.extraJson()).build();
  }

  private static Label label(PiJsonReader read) {
    Label.Builder label = Label.newBuilder();
    read.optionalString("targetId").ifPresent(label::setTargetId);
    read.optionalString("label").ifPresent(label::setLabel); // absent when the label is cleared
    return label.setExtraJson(read.extraJson()).build();
  }

  private static SessionInfo sessionInfo(PiJsonReader read) {
    SessionInfo.Builder info = SessionInfo.newBuilder();
    read.optionalString("name").ifPresent(info::setName);
    return info.setExtraJson(read.extraJson()).build();
  }

  private static ContextEdit contextEdit(PiJsonReader read) {
    ContextEdit.Builder edit = ContextEdit.newBuilder();
    read.optionalString("targetId").ifPresent(edit::setTargetId);
    JsonElement replacement = read.get("replacement");
    if (replacement != null && !replacement.isJsonNull()) { // null: the target is left out
      edit.setReplacement(replacement(replacement, at(read.where(), "replacement")));
    }
    return edit.setExtraJson(read.extraJson()).build();
  }

  private static ContextReplacement replacement(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.CONTEXT_REPLACEMENT);
    ContextReplacement.Builder replacement = ContextReplacement.newBuilder();
    if (isString(read.get("content"))) {
      TextContent text = TextContent.newBuilder().setText(read.string("content")).build();
      replacement.addContent(ContentBlock.newBuilder().setText(text)).setStringContent(true);
    } else {
      replacement.addAllContent(read.items("content", PiEntries::contentBlock));
    }
    return replacement.setExtraJson(read.extraJson()).build();
  }

  /** A block of any role's content: what a context edit may put in place of a message's. */
  private static ContentBlock contentBlock(JsonElement value, String where) {
    if (value.isJsonObject() && isString(value.getAsJsonObject().get("type"), "image")) {
      return ContentBlock.newBuilder()
          .setImage(PiMessageReader.mediaBlock(value, where).getImage())
          .build();
    }
    AssistantContent block = PiMessageReader.assistantBlock(value, where);
    ContentBlock.Builder content = ContentBlock.newBuilder();
    switch (block.getBlockCase()) {
      case TEXT -> content.setText(block.getText());
      case THINKING -> content.setThinking(block.getThinking());
      case TOOL_CALL -> content.setToolCall(block.getToolCall());
      case BLOCK_NOT_SET -> throw new IllegalStateException(where);
    }
    return content.build();
  }

  // --- writing -----------------------------------------------------------------------------------

  /** The entry's line: a session file's entry if it came from one, else the bare message. */
  static JsonObject write(TranscriptEntry entry) {
    switch (entry.getEntryCase()) {
      case SESSION_ENTRY -> {
        SessionEntry session = entry.getSessionEntry();
        JsonObject out = placedToPi(session.getType(), entry);
        Body body = BY_MEMBER.get(session.getBodyCase());
        if (body == null) { // a type without a body: written in the order of the keys it has
          return PiMessageWriter.withKept(
              out, session.getFieldsJson(), "SessionEntry.fields_json", PiKeyOrder.UNTYPED_ENTRY);
        }
        String extra =
            switch (body.member()) {
              case HEADER -> header(out, session.getHeader());
              case THINKING_LEVEL_CHANGE ->
                  thinkingLevelChange(out, session.getThinkingLevelChange());
              case MODEL_CHANGE -> modelChange(out, session.getModelChange());
              case USAGE -> usageRecord(out, session.getUsage());
              case COMPACTION -> compaction(out, session.getCompaction());
              case BRANCH_SUMMARY -> branchSummary(out, session.getBranchSummary());
              case CUSTOM -> custom(out, session.getCustom());
              case CUSTOM_MESSAGE -> customMessage(out, session.getCustomMessage());
              case LABEL -> label(out, session.getLabel());
              case SESSION_INFO -> sessionInfo(out, session.getSessionInfo());
              case CONTEXT_EDIT -> contextEdit(out, session.getContextEdit());
              case BODY_NOT_SET -> throw new IllegalStateException(session.getType());
            };
        return finish(out, extra, body.extraField(), body.keys());
      }
      case MESSAGE -> {
        JsonObject message = PiMessageWriter.message(entry.getMessage());
        if (!isPlaced(entry) && !entry.hasTimestamp() && entry.getSessionJson().isEmpty()) {
          return message;
        }
        JsonObject out = placedToPi("message", entry);
        out.add("message", message);
        return finish(
            out, entry.getSessionJson(), "TranscriptEntry.session_json", PiKeyOrder.MESSAGE_ENTRY);
      }
      default -> throw new PiJsonException("TranscriptEntry", "no entry is set");
    }
  }

  /** {@code out} with the line's kept keys, its keys in the order pi writes the type's. */
  private static JsonObject finish(JsonObject out, String kept, String field, PiKeyOrder keys) {
    return kept.isEmpty()
        ? PiKeyOrder.inOrder(out, keys.keys())
        : PiMessageWriter.withKept(out, kept, field, keys);
  }

  private static JsonObject placedToPi(String type, TranscriptEntry entry) {
    JsonObject out = new JsonObject();
    out.addProperty("type", type);
    if (entry.hasId()) {
      out.addProperty("id", entry.getId());
    }
    switch (entry.getParentCase()) {
      case PARENT_ID -> out.addProperty("parentId", entry.getParentId());
      case ROOT -> out.add("parentId", JsonNull.INSTANCE);
      case PARENT_NOT_SET -> {}
    }
    if (entry.hasTimestamp()) {
      out.addProperty("timestamp", entry.getTimestamp());
    }
    return out;
  }

  /** Writes a JSON-text field: empty leaves the key out. */
  private static void putJson(JsonObject out, String key, String text, String field) {
    if (!text.isEmpty()) {
      out.add(key, JsJson.parse(text, field));
    }
  }

  // Each body's writer adds its keys to the line and returns the body's extra_json.

  private static String header(JsonObject out, SessionHeader header) {
    if (header.hasVersion()) {
      out.addProperty("version", header.getVersion());
    }
    if (header.hasCwd()) {
      out.addProperty("cwd", header.getCwd());
    }
    if (header.hasParentSession()) {
      out.addProperty("parentSession", header.getParentSession());
    }
    return header.getExtraJson();
  }

  private static String thinkingLevelChange(JsonObject out, ThinkingLevelChange change) {
    if (change.hasThinkingLevel()) {
      out.addProperty("thinkingLevel", change.getThinkingLevel());
    }
    return change.getExtraJson();
  }

  private static String modelChange(JsonObject out, ModelChange change) {
    if (change.hasProvider()) {
      out.addProperty("provider", change.getProvider());
    }
    if (change.hasModelId()) {
      out.addProperty("modelId", change.getModelId());
    }
    return change.getExtraJson();
  }

  private static String usageRecord(JsonObject out, UsageRecord record) {
    if (record.hasKind()) {
      out.addProperty("kind", record.getKind());
    }
    if (record.hasProvider()) {
      out.addProperty("provider", record.getProvider());
    }
    if (record.hasModel()) {
      out.addProperty("model", record.getModel());
    }
    if (record.hasUsage()) {
      out.add("usage", PiMessageWriter.usage(record.getUsage()));
    }
    if (record.hasNote()) {
      out.addProperty("note", record.getNote());
    }
    return record.getExtraJson();
  }

  private static String compaction(JsonObject out, Compaction compaction) {
    if (compaction.hasSummary()) {
      out.addProperty("summary", compaction.getSummary());
    }
    if (compaction.hasFirstKeptEntryId()) {
      out.addProperty("firstKeptEntryId", compaction.getFirstKeptEntryId());
    }
    if (compaction.hasTokensBefore()) {
      out.addProperty("tokensBefore", compaction.getTokensBefore());
    }
    putJson(out, "details", compaction.getDetailsJson(), "Compaction.details_json");
    if (compaction.hasUsage()) {
      out.add("usage", PiMessageWriter.usage(compaction.getUsage()));
    }
    if (compaction.hasFromHook()) {
      out.addProperty("fromHook", compaction.getFromHook());
    }
    if (compaction.hasSystemMessage()) {
      out.add("systemMessage", PiMessageWriter.system(compaction.getSystemMessage()));
    }
    return compaction.getExtraJson();
  }

  private static String branchSummary(JsonObject out, BranchSummary summary) {
    if (summary.hasFromId()) {
      out.addProperty("fromId", summary.getFromId());
    }
    if (summary.hasSummary()) {
      out.addProperty("summary", summary.getSummary());
    }
    putJson(out, "details", summary.getDetailsJson(), "BranchSummary.details_json");
    if (summary.hasUsage()) {
      out.add("usage", PiMessageWriter.usage(summary.getUsage()));
    }
    if (summary.hasFromHook()) {
      out.addProperty("fromHook", summary.getFromHook());
    }
    return summary.getExtraJson();
  }

  private static String custom(JsonObject out, CustomEntry custom) {
    if (custom.hasCustomType()) {
      out.addProperty("customType", custom.getCustomType());
    }
    putJson(out, "data", custom.getDataJson(), "CustomEntry.data_json");
    return custom.getExtraJson();
  }

  private static String customMessage(JsonObject out, CustomMessageEntry custom) {
    if (custom.hasCustomType()) {
      out.addProperty("customType", custom.getCustomType());
    }
    if (custom.getStringContent()
        && custom.getContentCount() == 1
        && custom.getContent(0).hasText()) {
      out.addProperty("content", custom.getContent(0).getText().getText());
    } else {
      JsonArray content = new JsonArray();
      custom.getContentList().forEach(block -> content.add(PiMessageWriter.mediaBlock(block)));
      out.add("content", content);
    }
    if (custom.hasDisplay()) {
      out.addProperty("display", custom.getDisplay());
    }
    putJson(out, "details", custom.getDetailsJson(), "CustomMessageEntry.details_json");
    return custom.getExtraJson();
  }

  private static String label(JsonObject out, Label label) {
    if (label.hasTargetId()) {
      out.addProperty("targetId", label.getTargetId());
    }
    if (label.hasLabel()) {
      out.addProperty("label", label.getLabel());
    }
    return label.getExtraJson();
  }

  private static String sessionInfo(JsonObject out, SessionInfo info) {
    if (info.hasName()) {
      out.addProperty("name", info.getName());
    }
    return info.getExtraJson();
  }

  private static String contextEdit(JsonObject out, ContextEdit edit) {
    if (edit.hasTargetId()) {
      out.addProperty("targetId", edit.getTargetId());
    }
    out.add(
        "replacement",
        edit.hasReplacement() ? replacement(edit.getReplacement()) : JsonNull.INSTANCE);
    return edit.getExtraJson();
  }

  private static JsonObject replacement(ContextReplacement replacement) {
    JsonObject out = new JsonObject();
    if (replacement.getStringContent()
        && replacement.getContentCount() == 1
        && replacement.getContent(0).hasText()) {
      out.addProperty("content", replacement.getContent(0).getText().getText());
    } else {
      JsonArray content = new JsonArray();
      replacement.getContentList().forEach(block -> content.add(contentBlock(block)));
      out.add("content", content);
    }
    return PiMessageWriter.withExtra(
        out, replacement.getExtraJson(), "ContextReplacement", PiKeyOrder.CONTEXT_REPLACEMENT);
  }

  private static JsonObject contentBlock(ContentBlock block) {
    return switch (block.getBlockCase()) {
      case IMAGE ->
          PiMessageWriter.mediaBlock(UserContent.newBuilder().setImage(block.getImage()).build());
      case TEXT ->
          PiMessageWriter.assistantBlock(
              AssistantContent.newBuilder().setText(block.getText()).build());
      case THINKING ->
          PiMessageWriter.assistantBlock(
              AssistantContent.newBuilder().setThinking(block.getThinking()).build());
      case TOOL_CALL ->
          PiMessageWriter.assistantBlock(
              AssistantContent.newBuilder().setToolCall(block.getToolCall()).build());
      case BLOCK_NOT_SET -> throw new PiJsonException("ContentBlock", "no block is set");
    };
  }
}
