/**
 * A broken rule of a message: what the schema's rules (validate.ts) and its JSON text rules
 * (json-text.ts) report, in a module of its own so that neither imports the other.
 */

/** One broken rule: where, which rule, and what is wrong. */
export interface Violation {
  /**
   * The path of the field from the checked message, e.g. "context.messages[0].user.content[1].block";
   * "" for the message itself.
   */
  readonly fieldPath: string;
  /**
   * The rule's id: a protovalidate rule ("string.min_len", "required"), a CEL rule of the schema
   * ("done.reason_matches_message") or a JSON text rule ("json.syntax").
   */
  readonly ruleId: string;
  /** What is wrong, in words. */
  readonly detail: string;
}
