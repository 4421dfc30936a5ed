package io.github.piproto;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;

/**
 * pi-JSON: the JSON pi writes (its session files, its events; {@code role}/{@code type}
 * discriminators, camelCase, {@code "toolUse"}), read into the pi.ai.v1 messages and written back.
 *
 * <p>The codec is lossless on what pi writes: reading and writing back gives the same text, numbers
 * read as JSON.parse reads them and written as JSON.stringify writes them. Keys the schema does not
 * model go to the object's {@code extra_json}, and only those, so what a message's fields say is
 * what is written: an edit is never undone by a kept value. A key the object lacked leaves its
 * field unset (the fields pi may leave out are proto3 {@code optional}), and the writer leaves it
 * out again. The one value a field cannot hold is an empty list or object under a key the writer
 * leaves out when empty (a context's {@code tools: []}): it stays in {@code extra_json}, written
 * while the field is empty. The writer writes each object's keys in the order pi usually does; an
 * object whose keys came in another order lists them under {@code "$order"} in {@code extra_json},
 * and is written in that order. Messages of roles the schema does not model become CustomMessage.
 * Lone surrogates, which a protobuf string cannot hold, are read as U+10F800 + (surrogate - U+D800)
 * and written back as pi's escapes (docs/transcripts.md).
 *
 * <p>Bad input throws {@link PiJsonException} naming the path of the offending value from the
 * object read, e.g. {@code content[1].type}; an enum word pi does not define (a stop reason, a
 * thinking level) is bad input too.
 */
public final class PiJson {
  /** The form pi writes an event in. */
  public enum EventForm {
    /** With its {@code partial}, as pi's event streams carry it. */
    WITH_PARTIAL,
    /**
     * Without {@code partial}, as pi 1.6 writes events in its json and RPC modes; an {@code *_end}
     * event's {@code content} is still taken from the partial when the event has one.
     */
    DELTA_ONLY
  }

  private PiJson() {}

  /** One pi-JSON message: system, user, assistant, toolResult, or any other role (kept as is). */
  public static AgentMessage messageFromPi(String text) {
    return read(text, PiMessageReader::message);
  }

  public static String messageToPi(AgentMessage message) {
    return write(PiMessageWriter.message(message));
  }

  public static AssistantMessage assistantFromPi(String text) {
    return read(text, PiMessageReader::assistant);
  }

  public static String assistantToPi(AssistantMessage message) {
    return write(PiMessageWriter.assistant(message));
  }

  /**
   * A pi-JSON context: pi's Context ({@code systemPrompt}, {@code messages}, {@code tools}) or its
   * TranscriptContext ({@code messages} only, the prompt and tools in system messages), kept as
   * given.
   */
  public static AgentContext contextFromPi(String text) {
    return read(text, PiMessageReader::context);
  }

  public static String contextToPi(AgentContext context) {
    return write(PiMessageWriter.context(context));
  }

  /** One line of a pi session file, or one bare pi-JSON message. */
  public static TranscriptEntry entryFromPi(String text) {
    return read(text, PiEntries::read);
  }

  /**
   * An entry's line: a session file's entry if it came from one, else the bare message; an unparsed
   * line as it was read.
   */
  public static String entryToPi(TranscriptEntry entry) {
    if (entry.hasUnparsedLine()) {
      String line = entry.getUnparsedLine();
      if (line.indexOf('\n') >= 0) {
        throw new PiJsonException(
            "TranscriptEntry.unparsed_line",
            "holds a newline, so it would be read back as two lines");
      }
      return line;
    }
    return write(PiEntries.write(entry));
  }

  /**
   * One pi AssistantMessageEvent: its {@code partial} becomes {@link ModelEvent#getPartial}; one
   * without (pi 1.6's delta-only form) has none.
   */
  public static ModelEvent eventFromPi(String text) {
    return read(text, PiEvents::read);
  }

  /** An event as pi's event streams carry it, with its partial, which a non-terminal one needs. */
  public static String eventToPi(ModelEvent event) {
    return eventToPi(event, EventForm.WITH_PARTIAL);
  }

  public static String eventToPi(ModelEvent event, EventForm form) {
    return write(PiEvents.write(event, form == EventForm.DELTA_ONLY));
  }

  /**
   * The entries of a pi session file, one a line, as {@link #sessionFromPi(String, List)} reads
   * them, its warnings left out.
   */
  public static List<TranscriptEntry> sessionFromPi(String text) {
    return sessionFromPi(text, new ArrayList<>());
  }

  /**
   * The entries of a pi session file, one a line: the entry of line n is entry n - 1. A line that
   * is not one JSON entry (a blank line, text that is not JSON, JSON that is not an object, two
   * entries run together) is an {@code unparsed_line}, kept byte for byte, and a {@link
   * SessionWarning} naming it is added to {@code warnings}; pi's own loader skips such a line. A
   * line of JSON that is no entry throws a PiJsonException that names its {@link
   * PiJsonException#line}.
   */
  public static List<TranscriptEntry> sessionFromPi(String text, List<SessionWarning> warnings) {
    List<TranscriptEntry> entries = new ArrayList<>();
    String[] lines = text.split("\n", -1);
    // The newline that ends the last line starts no line after it (and an empty file has none).
    int count = lines[lines.length - 1].isEmpty() ? lines.length - 1 : lines.length;
    for (int index = 0; index < count; index++) {
      String line = lines[index];
      JsonElement value;
      String unparsed;
      try {
        value = JsJson.parse(line, "");
        unparsed =
            value.isJsonObject()
                ? ""
                : "JSON that is not an object: " + PiJsonReader.typeName(value);
      } catch (PiJsonException error) { // the line is not JSON
        value = null;
        unparsed = line.strip().isEmpty() ? "a blank line" : error.detail();
      }
      if (unparsed.isEmpty()) {
        try {
          entries.add(PiEntries.read(Surrogates.toProto(value), ""));
        } catch (PiJsonException error) {
          throw error.onLine(index + 1);
        }
        continue;
      }
      entries.add(TranscriptEntry.newBuilder().setUnparsedLine(line).build());
      warnings.add(
          new SessionWarning(index + 1, "not one JSON entry (" + unparsed + "); kept as it is"));
    }
    return entries;
  }

  /**
   * A session file of {@code entries}: each entry's line, ended by a newline, as pi writes it; an
   * unparsed line as it was read.
   */
  public static String sessionToPi(List<TranscriptEntry> entries) {
    StringBuilder out = new StringBuilder();
    entries.forEach(entry -> out.append(entryToPi(entry)).append('\n'));
    return out.toString();
  }

  /** Reads pi's text, its strings mapped once to what protobuf strings hold. */
  private static <T> T read(String text, PiJsonReader.Read<T> read) {
    return read.read(Surrogates.toProto(JsJson.parse(text, "")), "");
  }

  /** Writes pi's text, the strings mapped back from what protobuf strings hold. */
  private static String write(JsonObject out) {
    return JsJson.stringify(Surrogates.fromProto(out));
  }
}
