package piproto

import (
	"math"
	"testing"
)

// ECMA-262's Number::toString at each of its thresholds.
func TestJSNumberWritesWhatJavaScriptWrites(t *testing.T) {
	for _, number := range []struct {
		value float64
		want  string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1.5, "-1.5"}, {100, "100"},
		{0.30000000000000004, "0.30000000000000004"}, {1e20, "100000000000000000000"}, {1e21, "1e+21"},
		{123456789012345678901234567890, "1.2345678901234568e+29"}, {1.5e-6, "0.0000015"},
		{1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.23e-18, "1.23e-18"}, {5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {9007199254740993, "9007199254740992"},
		{-2.5e-7, "-2.5e-7"}, {0.013875000000000002, "0.013875000000000002"}, {1765233665294, "1765233665294"},
	} {
		if got := jsNumber(number.value); got != number.want {
			t.Errorf("jsNumber(%v) = %s, want %s", number.value, got, number.want)
		}
	}
}

// JSON.stringify escapes `"`, `\` and the control characters, and nothing else.
func TestStringsAreEscapedAsJSONStringifyEscapesThem(t *testing.T) {
	text := "\"\\/\b\f\n\r\t\x00\x1f\x7f é\u2028😀"
	want := `"\"\\/\b\f\n\r\t\u0000\u001f` + "\x7f é\u2028😀" + `"`
	if got := string(appendString(nil, text, false)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// To pi, a mapped surrogate is its escape again; rangeEscape leaves the character it marks.
	if got := string(appendString(nil, "\U0010F83D\U0010F7FF\U0010FFFF\U0010F7FF", true)); got != `"\ud83d`+"\U0010FFFF\U0010F7FF"+`"` {
		t.Errorf("to pi: %s", got)
	}
}

func TestTheSurrogateMappingIsReversible(t *testing.T) {
	for _, text := range []string{
		`"\ud83d"`, `"\udc00\ud800"`, `"\ud83d\ude00"`, `"\ud83dx"`, `"\\ud83d"`, "\"\U0010F7FF\U0010F800\U0010FFFF\"",
		`"\udbfd\udfff"`, `{"\ud83d":["\ud83d"]}`, `"\ud83d\u0041"`,
	} {
		value, err := parseJSON([]byte(text), true)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		back, err := parseJSON(appendJSON(nil, value, true), true)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if dumpJSON(back) != dumpJSON(value) {
			t.Errorf("%s came back as %s", text, appendJSON(nil, value, true))
		}
	}
	value, err := parseJSON([]byte(`"\udbfd\udfff \ud83d\ude00"`), true) // U+10F7FF by its escapes, and 😀
	if err != nil || value != jsonString("\U0010F7FF\U0010F7FF 😀") {
		t.Errorf("read as %q (%v)", value, err)
	}
}

func TestJSONThatIsNotJSONIsRefused(t *testing.T) {
	for _, text := range []string{``, `{`, `[1,]`, `{"a":1,}`, `1 2`, `NaN`, `1e400`, `"\u12"`, `{"a" 1}`, `[1]]`} {
		if _, err := parseJSON([]byte(text), true); err == nil {
			t.Errorf("%q read", text)
		}
	}
	value, err := parseJSON([]byte(` {"b":1,"a":[true,null,"x"],"b":2} `), true)
	if err != nil || dumpJSON(value) != `{"b":2,"a":[true,null,"x"]}` {
		t.Errorf("read as %s (%v)", dumpJSON(value), err)
	}
}
