/**
 * Message rules: the schema's protovalidate rules, then its JSON text rules.
 *
 * Every rule that fits one message is a `buf.validate` annotation in proto/pi/ai/v1, enforced here
 * by @bufbuild/protovalidate. The JSON text of fields marked with the `pi.ai.v1.json` option is
 * checked by the walker in json-text.ts, once the message passes its annotations. A broken rule is
 * a Violation: the field's path from the checked message, the rule's id and a detail, e.g.
 * `context.messages[2].assistant.content[1].tool_call.arguments_json`, `json.object`. The rules of
 * a stream of events live with the Accumulator that applies them.
 */

import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { Path } from "@bufbuild/protobuf/reflect";
import { createValidator } from "@bufbuild/protovalidate";
import { jsonViolations, mapKey } from "./json-text.js";
import type { Violation } from "./violation.js";

export type { Violation } from "./violation.js";

/** A message that breaks one or more rules; `violations` lists every one. */
export class ValidationError extends Error {
  override name = "ValidationError";

  constructor(readonly violations: readonly Violation[]) {
    super(violations.map(describeViolation).join("; "));
  }
}

const validator = createValidator();

/**
 * Every rule `message` breaks: its protovalidate rules, all of them; or, when those all hold, its
 * JSON text rules. Empty when the message is valid.
 */
export function violations<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Violation[] {
  const result = validator.validate(schema, message);
  if (result.kind === "error") throw result.error; // a rule that cannot run: the schema is broken
  if (result.kind === "invalid") {
    return result.violations.map((found) => ({
      fieldPath: renderPath(found.field),
      ruleId: found.ruleId,
      detail: found.message,
    }));
  }
  return jsonViolations(schema, message);
}

/** Throw a ValidationError listing every rule `message` breaks; return when it breaks none. */
export function check<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): void {
  const found = violations(schema, message);
  if (found.length > 0) throw new ValidationError(found);
}

/** A violation in one line: "path: detail [rule]". */
export function describeViolation(violation: Violation): string {
  return `${violation.fieldPath || "the message"}: ${violation.detail} [${violation.ruleId}]`;
}

/** A protovalidate path as field names joined by dots, with list indexes and map keys in brackets. */
function renderPath(path: Path): string {
  let out = "";
  for (const step of path) {
    switch (step.kind) {
      case "list_sub":
        out += `[${step.index}]`;
        break;
      case "map_sub":
        out += `[${mapKey(step.key)}]`;
        break;
      case "extension":
        out += `${out ? "." : ""}[${step.typeName}]`;
        break;
      default:
        out += `${out ? "." : ""}${step.name}`;
    }
  }
  return out;
}
