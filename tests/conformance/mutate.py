"""Every case changed to expect something else: the harness checks that no runtime passes one.

An outcome the harness compared fails once the case expects another; one it did not compare
would still pass.
"""

from __future__ import annotations

from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb


def mutate(case: pb.Case) -> None:
    """Change the expected outcome of one case, in place, and say how in its description."""
    kind = case.WhichOneof("kind")
    if kind == "wire":
        case.wire.json.struct_value.fields["mutated"].bool_value = True
        how = "its ProtoJSON gains a field"
    elif kind == "validate":
        if case.validate.violations:
            case.validate.violations[0].rule_id += ".mutated"
            how = "a violation's rule id changes"
        else:
            case.validate.violations.add(field_path="mutated", rule_id="mutated")
            how = "it expects a violation"
    elif kind == "stream":
        if case.stream.WhichOneof("expect") == "failure":
            case.stream.failure.event_index += 1
            how = "the failure moves to the next event"
        else:
            case.stream.success.partials[-1].model += "-mutated"
            how = "the last partial's model changes"
    elif kind == "client":
        case.client.expect.events += 1
        how = "it expects one more event"
    elif kind == "cost":
        case.cost.cost.total += 1
        how = "the total cost grows by a dollar"
    elif kind == "partial_json":
        case.partial_json.completed += " "
        how = "the completion gains a space"
    else:
        body = case.pi_json
        if body.WhichOneof("expect") == "error_path":
            body.error_path += ".mutated"
        elif body.HasField("edited"):
            body.edited_text += " "
        elif body.HasField("session"):
            body.session.warned_lines.append(len(body.session.entries) + 1)
        else:
            body.written = (body.written or body.text) + " "
        how = "the error path, the warned lines or the written text changes"
    case.description = f"mutated: {how}"
