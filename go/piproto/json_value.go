package piproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The JSON values the pi-JSON codec reads and writes. pi-JSON comes back byte for byte, so an
// object keeps the order of its keys, which a Go map forgets; and every number is a double, as
// in JavaScript, whose JSON.parse and JSON.stringify pi's text is.

// jsonValue is one of jsonNull, jsonBool, jsonNumber, jsonString, jsonArray and *jsonObject; a
// nil jsonValue is a key an object does not have.
type jsonValue interface{ isJSONValue() }

type (
	jsonNull   struct{}
	jsonBool   bool
	jsonNumber float64
	jsonString string
	jsonArray  []jsonValue
)

// jsonObject is an object with its keys in order. A key set twice keeps its first place and its
// last value, as with JSON.parse.
type jsonObject struct {
	keys   []string
	values map[string]jsonValue
}

func (jsonNull) isJSONValue()    {}
func (jsonBool) isJSONValue()    {}
func (jsonNumber) isJSONValue()  {}
func (jsonString) isJSONValue()  {}
func (jsonArray) isJSONValue()   {}
func (*jsonObject) isJSONValue() {}

func newObject() *jsonObject {
	return &jsonObject{values: map[string]jsonValue{}}
}

func (o *jsonObject) has(key string) bool {
	_, ok := o.values[key]
	return ok
}

func (o *jsonObject) set(key string, value jsonValue) {
	if !o.has(key) {
		o.keys = append(o.keys, key)
	}
	o.values[key] = value
}

// setDefault sets key unless the object has it already.
func (o *jsonObject) setDefault(key string, value jsonValue) {
	if !o.has(key) {
		o.set(key, value)
	}
}

// remove takes key out of the object; the value it had, or nil.
func (o *jsonObject) remove(key string) jsonValue {
	value, ok := o.values[key]
	if ok {
		delete(o.values, key)
		for i, name := range o.keys {
			if name == key {
				o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
				break
			}
		}
	}
	return value
}

// without is a copy of the object without key.
func (o *jsonObject) without(key string) *jsonObject {
	out := newObject()
	for _, name := range o.keys {
		if name != key {
			out.set(name, o.values[name])
		}
	}
	return out
}

// typeName is how an error message names the kind of value.
func typeName(value jsonValue) string {
	switch value.(type) {
	case nil:
		return "nothing"
	case jsonNull:
		return "null"
	case jsonBool:
		return "boolean"
	case jsonNumber:
		return "number"
	case jsonString:
		return "string"
	case jsonArray:
		return "list"
	}
	return "object"
}

// maxParseDepth bounds the nesting parseJSON reads (it recurses once per level), as
// encoding/json bounds its own.
const maxParseDepth = 10000

// parseJSON reads JSON text as JSON.parse does. fromPi says the text is pi's, whose strings are
// mapped to what a protobuf string holds (see surrogatesToProto); otherwise it is text this
// runtime holds (a *_json field), already mapped.
func parseJSON(text []byte, fromPi bool) (jsonValue, error) {
	decoder := json.NewDecoder(bytes.NewReader(surrogatesToProto(text, fromPi)))
	decoder.UseNumber() // the number's text, read as a double below
	value, err := decodeValue(decoder, 0)
	if err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more text after the value")
		}
		return nil, err
	}
	return value, nil
}

func decodeValue(decoder *json.Decoder, depth int) (jsonValue, error) {
	token, err := decoder.Token()
	if errors.Is(err, io.EOF) {
		return nil, io.ErrUnexpectedEOF
	} else if err != nil {
		return nil, err
	}
	switch token := token.(type) {
	case json.Delim: // '[' or '{': a closing one is read by closing, never here
		if depth == maxParseDepth {
			return nil, fmt.Errorf("nested more than %d deep", maxParseDepth)
		}
		if token == '[' {
			return decodeArray(decoder, depth+1)
		}
		return decodeObject(decoder, depth+1)
	case string:
		return jsonString(token), nil
	case json.Number:
		number, err := strconv.ParseFloat(string(token), 64)
		if err != nil {
			return nil, fmt.Errorf("the number %.40s is beyond the range of a double", token)
		}
		return jsonNumber(number), nil
	case bool:
		return jsonBool(token), nil
	}
	return jsonNull{}, nil
}

func decodeArray(decoder *json.Decoder, depth int) (jsonValue, error) {
	array := jsonArray{}
	for decoder.More() {
		item, err := decodeValue(decoder, depth)
		if err != nil {
			return nil, err
		}
		array = append(array, item)
	}
	return array, closing(decoder)
}

func decodeObject(decoder *json.Decoder, depth int) (jsonValue, error) {
	object := newObject()
	for decoder.More() {
		key, err := decoder.Token() // a string: the decoder refuses anything else here
		if err != nil {
			return nil, err
		}
		value, err := decodeValue(decoder, depth)
		if err != nil {
			return nil, err
		}
		object.set(key.(string), value)
	}
	return object, closing(decoder)
}

// closing reads the ']' or '}' that ends an array or object (More found no value before it).
func closing(decoder *json.Decoder) error {
	_, err := decoder.Token()
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
