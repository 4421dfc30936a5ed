package io.github.piproto;

import build.buf.validate.Ignore;
import build.buf.validate.ValidateProto;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.github.piproto.ai.v1.Json;
import io.github.piproto.ai.v1.JsonShape;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JSON text rules of the schema ({@code pi.ai.v1.JsonText}): every string field marked with the
 * {@code pi.ai.v1.json} option, wherever it sits in a message, must hold the JSON its option asks
 * for. {@link #violations} finds those fields by walking the descriptors, so a JSON field added to
 * the schema needs no code here; {@link #problem} reads one text.
 *
 * <p>A field with presence that is unset is skipped, and so is an empty string where the option
 * allows it. Fields whose protovalidate rules are ignored ({@code IGNORE_ALWAYS}: a partial, a
 * start header) are not entered: they hold unfinished messages, to which no rule applies.
 *
 * <p>On a field whose option lists {@code modelled_keys} (every {@code extra_json}), an object must
 * not hold one of those keys ({@code json.extra}, see {@code modelledKeyProblem}); that is checked
 * only once the text passed the other rules.
 *
 * <p>A text is read as RFC 8259 defines JSON and JavaScript's {@code JSON.parse} reads it, by
 * Gson's JsonReader in strict mode: it refuses NaN and Infinity, comments, single quotes, trailing
 * commas, leading zeros, raw control characters in strings and a second value, and it allows
 * duplicate keys and escaped lone surrogates, as {@code JSON.parse} does. What it would let through
 * is checked here: a leading byte order mark (which it skips), numbers beyond the range of a
 * double, and nesting deeper than {@link #MAX_DEPTH}. The reader keeps its own stack, so a text
 * nested 100,000 deep costs memory, not the thread's stack. The reader cannot read a number longer
 * than its buffer (1,024 characters), so {@link LongNumbers} reads those first.
 */
public final class JsonText {
  /** Objects and arrays nest at most this deep. */
  public static final int MAX_DEPTH = 64;

  /** One broken JSON text rule: its id and what is wrong. */
  public record Problem(String ruleId, String detail) {}

  /** Per message type: its JSON text fields, and the message fields that may hold some. */
  private record Plan(
      List<FieldDescriptor> texts, List<FieldDescriptor> messages, boolean holdsJson) {
    Plan(List<FieldDescriptor> texts, List<FieldDescriptor> messages) {
      this(texts, messages, !texts.isEmpty() || !messages.isEmpty());
    }
  }

  private static final Map<Descriptor, Plan> PLANS = new ConcurrentHashMap<>();

  /** The plan of a type while its own fields are planned: assume it holds JSON. */
  private static final Plan RECURSIVE = new Plan(List.of(), List.of(), true);

  private JsonText() {}

  /** The broken JSON text rules of {@code message}, in field order; empty when none. */
  public static List<Violation> violations(Message message) {
    List<Violation> found = new ArrayList<>();
    walk(message, "", found);
    return found;
  }

  private static void walk(Message message, String path, List<Violation> found) {
    Plan plan = plan(message.getDescriptorForType());
    for (FieldDescriptor field : plan.texts()) {
      if (field.hasPresence() && !message.hasField(field)) {
        continue;
      }
      io.github.piproto.ai.v1.JsonText rule = field.getOptions().getExtension(Json.json);
      String text = (String) message.getField(field);
      if (text.isEmpty() && rule.getEmptyAllowed()) {
        continue;
      }
      Optional<Problem> problem = problem(text, rule.getShape() == JsonShape.JSON_SHAPE_OBJECT);
      if (problem.isEmpty() && rule.getModelledKeysCount() > 0) {
        problem = modelledKeyProblem(text, rule.getModelledKeysList());
      }
      problem.ifPresent(
          broken ->
              found.add(
                  new Violation(join(path, field.getName()), broken.ruleId(), broken.detail())));
    }
    for (FieldDescriptor field : plan.messages()) {
      if (field.isRepeated()) {
        for (int index = 0; index < message.getRepeatedFieldCount(field); index++) {
          Message item = (Message) message.getRepeatedField(field, index);
          walk(item, join(path, field.getName()) + "[" + index + "]", found);
        }
      } else if (message.hasField(field)) {
        walk((Message) message.getField(field), join(path, field.getName()), found);
      }
    }
  }

  private static Plan plan(Descriptor type) {
    Plan known = PLANS.get(type);
    return known != null ? known : planned(type);
  }

  private static synchronized Plan planned(Descriptor type) {
    Plan known = PLANS.get(type);
    if (known != null) {
      return known; // planned meanwhile, or being planned: a recursive type is taken to hold JSON
    }
    PLANS.put(type, RECURSIVE);
    List<FieldDescriptor> texts = new ArrayList<>();
    List<FieldDescriptor> messages = new ArrayList<>();
    for (FieldDescriptor field : type.getFields()) {
      if (field.getOptions().getExtension(ValidateProto.field).getIgnore()
          == Ignore.IGNORE_ALWAYS) {
        continue; // an unfinished message (a partial, a start header): no rule applies inside
      }
      if (field.getOptions().hasExtension(Json.json)) {
        texts.add(field);
      } else if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE
          && !field.isMapField()
          && plan(field.getMessageType()).holdsJson()) {
        messages.add(field);
      }
    }
    Plan plan = new Plan(List.copyOf(texts), List.copyOf(messages));
    PLANS.put(type, plan);
    return plan;
  }

  private static String join(String path, String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  /**
   * What breaks the rules in {@code text}, checked in this order: {@code json.syntax} (not JSON),
   * {@code json.depth} (nested too deep), {@code json.number} (a number a double cannot hold) and,
   * when {@code objectRequired}, {@code json.object} (not an object); empty when nothing does.
   */
  public static Optional<Problem> problem(String text, boolean objectRequired) {
    if (text.startsWith("\ufeff")) {
      return Optional.of(
          new Problem("json.syntax", "not valid JSON: starts with a byte order mark"));
    }
    LongNumbers longNumbers = LongNumbers.of(text);
    JsonReader reader = new JsonReader(new StringReader(longNumbers.text()));
    reader.setStrictness(Strictness.STRICT);
    reader.setNestingLimit(Integer.MAX_VALUE); // the depth is checked below, after the syntax
    int depth = 0;
    int deepest = 0;
    String hugeNumber = longNumbers.huge();
    JsonToken first;
    try {
      first = reader.peek();
      do {
        switch (reader.peek()) {
          case BEGIN_ARRAY -> {
            reader.beginArray();
            deepest = Math.max(deepest, ++depth);
          }
          case BEGIN_OBJECT -> {
            reader.beginObject();
            deepest = Math.max(deepest, ++depth);
          }
          case END_ARRAY -> {
            reader.endArray();
            depth -= 1;
          }
          case END_OBJECT -> {
            reader.endObject();
            depth -= 1;
          }
          case NAME -> reader.nextName();
          case STRING -> reader.nextString();
          case NUMBER -> {
            String number = reader.nextString();
            if (hugeNumber == null && Double.isInfinite(Double.parseDouble(number))) {
              hugeNumber = number;
            }
          }
          case BOOLEAN -> reader.nextBoolean();
          case NULL -> reader.nextNull();
          case END_DOCUMENT -> throw new IllegalStateException("read past the end");
        }
      } while (reader.peek() != JsonToken.END_DOCUMENT);
    } catch (IOException | NumberFormatException error) {
      return Optional.of(new Problem("json.syntax", "not valid JSON: " + reason(error)));
    }
    if (deepest > MAX_DEPTH) {
      return Optional.of(
          new Problem("json.depth", "nested " + deepest + " deep, deeper than " + MAX_DEPTH));
    }
    if (hugeNumber != null) {
      return Optional.of(
          new Problem(
              "json.number", "holds " + abridged(hugeNumber) + ", beyond the range of a double"));
    }
    if (objectRequired && first != JsonToken.BEGIN_OBJECT) {
      return Optional.of(
          new Problem("json.object", "must hold a JSON object, got " + typeName(first)));
    }
    return Optional.empty();
  }

  /**
   * The {@code json.extra} rule of an {@code extra_json} text that passed the other rules: the
   * first key of its object that is in {@code modelled}, unless its value is {@code []} or {@code
   * {}} (a repeated field cannot tell empty from none, so that is kept); empty when there is none.
   * A duplicate key counts with its last value, in the place of its first: JSON.parse's reading.
   */
  static Optional<Problem> modelledKeyProblem(String text, Collection<String> modelled) {
    // Long numbers are replaced as in problem(), so the reader's buffer holds every token.
    JsonElement value = JsonParser.parseString(LongNumbers.of(text).text());
    if (!value.isJsonObject()) {
      return Optional.empty(); // only an object holds keys
    }
    for (Map.Entry<String, JsonElement> entry : value.getAsJsonObject().entrySet()) {
      JsonElement held = entry.getValue();
      boolean kept =
          (held.isJsonArray() && held.getAsJsonArray().isEmpty())
              || (held.isJsonObject() && held.getAsJsonObject().isEmpty());
      if (!kept && modelled.contains(entry.getKey())) {
        return Optional.of(
            new Problem(
                "json.extra",
                "holds '" + entry.getKey() + "', a key the message models as a field"));
      }
    }
    return Optional.empty();
  }

  /** The reader's explanation, without its advice on leniency or its link. */
  private static String reason(Exception error) {
    String message = String.valueOf(error.getMessage()).lines().findFirst().orElse("");
    return message.replace(
        "Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON", "malformed");
  }

  private static String abridged(String number) {
    return number.length() <= 24
        ? number
        : number.substring(0, 20) + "... (" + number.length() + " characters)";
  }

  private static String typeName(JsonToken token) {
    return switch (token) {
      case BEGIN_ARRAY -> "an array";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      default -> "an object";
    };
  }

  /**
   * The text with every long number outside strings replaced by 0, and the first of them that a
   * double cannot hold. Only a whole JSON number is replaced, so the text stays JSON exactly when
   * it was JSON.
   */
  private record LongNumbers(String text, String huge) {
    /** Shorter runs are left to the reader, whose buffer holds them whole. */
    private static final int LONG = 256;

    private static final java.util.regex.Pattern NUMBER =
        java.util.regex.Pattern.compile("-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?");

    static LongNumbers of(String text) {
      StringBuilder replaced = null;
      String huge = null;
      int copied = 0;
      boolean inString = false;
      for (int at = 0; at < text.length(); at++) {
        char unit = text.charAt(at);
        if (inString) {
          if (unit == '\\') {
            at += 1;
          } else if (unit == '"') {
            inString = false;
          }
        } else if (unit == '"') {
          inString = true;
        } else if (isNumberPart(unit)) {
          int end = at;
          while (end < text.length() && isNumberPart(text.charAt(end))) {
            end += 1;
          }
          String run = text.substring(at, end);
          if (run.length() >= LONG && NUMBER.matcher(run).matches()) {
            if (huge == null && Double.isInfinite(Double.parseDouble(run))) {
              huge = run;
            }
            replaced = replaced == null ? new StringBuilder(text.length()) : replaced;
            replaced.append(text, copied, at).append('0');
            copied = end;
          }
          at = end - 1;
        }
      }
      if (replaced == null) {
        return new LongNumbers(text, null);
      }
      return new LongNumbers(replaced.append(text, copied, text.length()).toString(), huge);
    }

    private static boolean isNumberPart(char unit) {
      return (unit >= '0' && unit <= '9')
          || unit == '-'
          || unit == '+'
          || unit == '.'
          || unit == 'e'
          || unit == 'E';
    }
  }
}
