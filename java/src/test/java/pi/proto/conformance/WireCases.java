package pi.proto.conformance;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import pi.conformance.v1.Conformance;

/**
 * The wire cases: a pi.ai.v1 message decodes from its bytes and encodes back to them (unknown
 * fields included), prints ProtoJSON equal in value to the case's, and parses back from it.
 */
final class WireCases {
  /** Every generated pi.ai.v1 message, by full name. */
  private static final Map<String, Message> TYPES = new HashMap<>();

  static {
    for (Class<?> file :
        List.of(
            pi.ai.v1.Content.class,
            pi.ai.v1.Context.class,
            pi.ai.v1.Event.class,
            pi.ai.v1.Message.class,
            pi.ai.v1.Service.class,
            pi.ai.v1.Json.class)) {
      for (Class<?> type : file.getDeclaredClasses()) {
        if (Message.class.isAssignableFrom(type)) {
          try {
            Message prototype = (Message) type.getMethod("getDefaultInstance").invoke(null);
            TYPES.put(prototype.getDescriptorForType().getFullName(), prototype);
          } catch (ReflectiveOperationException error) {
            throw new IllegalStateException(error);
          }
        }
      }
    }
  }

  private WireCases() {}

  static void run(Conformance.WireCase wire) throws Exception {
    Message prototype = TYPES.get(wire.getType());
    if (prototype == null) {
      throw new Mismatch("no pi.ai.v1 type " + wire.getType());
    }
    Message message = prototype.getParserForType().parseFrom(wire.getBinary());
    if (!message.toByteString().equals(wire.getBinary())) {
      throw new Mismatch("re-encoding gives other bytes");
    }
    String printed = JsonFormat.printer().print(message);
    Value.Builder printedValue = Value.newBuilder();
    JsonFormat.parser().merge(printed, printedValue);
    if (!sameJson(printedValue.build(), wire.getJson())) {
      throw new Mismatch("ProtoJSON differs: " + printed);
    }
    Message.Builder parsed = prototype.newBuilderForType();
    JsonFormat.parser().merge(JsonFormat.printer().print(wire.getJson()), parsed);
    ByteString expected = wire.getJsonBinary().isEmpty() ? wire.getBinary() : wire.getJsonBinary();
    if (!parsed.build().toByteString().equals(expected)) {
      throw new Mismatch("parsing the ProtoJSON gives other bytes");
    }
  }

  /** JSON values compared as JSON: numbers as doubles, objects without order. */
  private static boolean sameJson(Value left, Value right) {
    if (left.getKindCase() != right.getKindCase()) {
      return false;
    }
    return switch (left.getKindCase()) {
      case NUMBER_VALUE -> left.getNumberValue() == right.getNumberValue();
      case STRUCT_VALUE -> {
        Map<String, Value> a = left.getStructValue().getFieldsMap();
        Map<String, Value> b = right.getStructValue().getFieldsMap();
        yield a.keySet().equals(b.keySet())
            && a.keySet().stream().allMatch(key -> sameJson(a.get(key), b.get(key)));
      }
      case LIST_VALUE -> {
        List<Value> a = left.getListValue().getValuesList();
        List<Value> b = right.getListValue().getValuesList();
        boolean same = a.size() == b.size();
        for (int index = 0; same && index < a.size(); index++) {
          same = sameJson(a.get(index), b.get(index));
        }
        yield same;
      }
      default -> left.equals(right);
    };
  }
}
