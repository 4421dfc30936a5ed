package io.github.piproto;

import build.buf.validate.Ignore;
import build.buf.validate.ValidateProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.github.piproto.ai.v1.Json;
import io.github.piproto.ai.v1.JsonShape;
import io.github.piproto.ai.v1.JsonText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JSON text rules of a message: every string field marked with the {@code pi.ai.v1.json}
 * option, wherever it sits in the message, must hold the JSON its option asks for. The walk is
 * driven by the descriptors, so a JSON field added to the schema needs no code here.
 *
 * <p>A field with presence that is unset is skipped, and so is an empty string where the option
 * allows it; every other text is read by {@link StrictJson}. Fields whose protovalidate rules are
 * ignored ({@code IGNORE_ALWAYS}: a partial, a start header) are not entered: they hold unfinished
 * messages, to which no rule applies.
 */
public final class JsonTextRules {
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

  private JsonTextRules() {}

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
      JsonText rule = field.getOptions().getExtension(Json.json);
      String text = (String) message.getField(field);
      if (text.isEmpty() && rule.getEmptyAllowed()) {
        continue;
      }
      Optional<StrictJson.Problem> problem =
          StrictJson.problem(text, rule.getShape() == JsonShape.JSON_SHAPE_OBJECT);
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
}
