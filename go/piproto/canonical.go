package piproto

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MarshalCanonical encodes message with its fields in field-number order at every level, map
// entries sorted by key, then its unknown fields: the bytes most protobuf runtimes write, and those of the conformance
// corpus's wire cases.
//
// proto.Marshal writes the same fields, which decode to the same message, but puts the members of
// a oneof after the other fields, to stay compatible with what older Go releases wrote; any
// protobuf reader accepts both orders. MarshalCanonical is for when the bytes themselves are
// compared: hashes, golden files, signatures.
func MarshalCanonical(message proto.Message) ([]byte, error) {
	return appendCanonical(nil, message.ProtoReflect())
}

func appendCanonical(out []byte, message protoreflect.Message) ([]byte, error) {
	fields := message.Descriptor().Fields()
	ordered := make([]protoreflect.FieldDescriptor, fields.Len())
	for i := range ordered {
		ordered[i] = fields.Get(i)
	}
	slices.SortFunc(ordered, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	for _, field := range ordered {
		if !message.Has(field) {
			continue
		}
		value := message.Get(field)
		var err error
		switch {
		case field.Message() != nil && field.IsList():
			list := value.List()
			for i := range list.Len() {
				if out, err = appendMessageField(out, field.Number(), list.Get(i).Message()); err != nil {
					return nil, err
				}
			}
		case field.Message() != nil && !field.IsMap():
			if out, err = appendMessageField(out, field.Number(), value.Message()); err != nil {
				return nil, err
			}
		default:
			// Scalars, packed or not, and maps: proto.Marshal of a message holding only this field.
			alone := message.Type().New()
			alone.Set(field, value)
			if out, err = (proto.MarshalOptions{Deterministic: true}).MarshalAppend(out, alone.Interface()); err != nil {
				return nil, err
			}
		}
	}
	return append(out, message.GetUnknown()...), nil
}

func appendMessageField(out []byte, number protoreflect.FieldNumber, message protoreflect.Message) ([]byte, error) {
	body, err := appendCanonical(nil, message)
	if err != nil {
		return nil, err
	}
	out = protowire.AppendTag(out, number, protowire.BytesType)
	return protowire.AppendBytes(out, body), nil
}
