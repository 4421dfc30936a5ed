package io.github.piproto.conformance;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.github.piproto.Wire;
import io.github.piproto.ai.v1.Service;
import io.github.piproto.ai.v1.Transcript;
import io.github.piproto.conformance.v1.WireCase;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The wire cases: a pi.ai.v1 message decodes from its bytes and encodes back to them (unknown
 * fields included), prints ProtoJSON equal in value to the case's, and parses back from it.
 */
final class WireCases {
  /** Every generated pi.ai.v1 message, by full name (StreamBatchedResponse among them). */
  private static final Map<String, Message> TYPES = new HashMap<>();

  static {
    // The service's and the transcript's files import every other file of pi.ai.v1.
    ArrayDeque<FileDescriptor> files =
        new ArrayDeque<>(List.of(Service.getDescriptor(), Transcript.getDescriptor()));
    Set<FileDescriptor> seen = new HashSet<>();
    while (!files.isEmpty()) {
      FileDescriptor file = files.pop();
      if (!file.getPackage().equals("pi.ai.v1") || !seen.add(file)) {
        continue;
      }
      files.addAll(file.getDependencies());
      for (Descriptor type : file.getMessageTypes()) {
        String className = file.getOptions().getJavaPackage() + "." + type.getName();
        try {
          Message prototype =
              (Message) Class.forName(className).getMethod("getDefaultInstance").invoke(null);
          TYPES.put(type.getFullName(), prototype);
        } catch (ReflectiveOperationException error) {
          throw new IllegalStateException(error);
        }
      }
    }
  }

  private WireCases() {}

  static void run(WireCase wire) throws Exception {
    Message prototype = TYPES.get(wire.getType());
    if (prototype == null) {
      throw new Mismatch("no pi.ai.v1 type " + wire.getType());
    }
    Message message = prototype.getParserForType().parseFrom(wire.getBinary());
    if (!ByteString.copyFrom(Wire.toBytes(message)).equals(wire.getBinary())) {
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
    if (!ByteString.copyFrom(Wire.toBytes(parsed.build())).equals(expected)) {
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
