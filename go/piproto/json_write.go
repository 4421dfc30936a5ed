package piproto

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON text as JavaScript's JSON.stringify writes it, compact: what pi writes, and the form of
// every *_json field, the same bytes in every runtime.

// dumpJSON is value as the text of a *_json field: strings as this runtime holds them.
func dumpJSON(value jsonValue) string {
	return string(appendJSON(nil, value, false))
}

// appendJSON appends value's text to out; toPi writes strings as pi's text (see piRunes).
func appendJSON(out []byte, value jsonValue, toPi bool) []byte {
	switch value := value.(type) {
	case jsonBool:
		return strconv.AppendBool(out, bool(value))
	case jsonNumber:
		return append(out, jsNumber(float64(value))...)
	case jsonString:
		return appendString(out, string(value), toPi)
	case jsonArray:
		out = append(out, '[')
		for i, item := range value {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendJSON(out, item, toPi)
		}
		return append(out, ']')
	case *jsonObject:
		out = append(out, '{')
		for i, key := range value.keys {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(appendString(out, key, toPi), ':')
			out = appendJSON(out, value.values[key], toPi)
		}
		return append(out, '}')
	}
	return append(out, "null"...)
}

// jsNumber is a finite double as JavaScript's Number.prototype.toString writes it (ECMA-262
// Number::toString): `1e+21`, `100`, `0.0000015`, `1e-7`, `5e-324`, and `0` for negative zero.
func jsNumber(value float64) string {
	if value == 0 {
		return "0"
	}
	sign := ""
	if value < 0 {
		sign, value = "-", -value
	}
	// strconv's shortest digits that read back as the same double are the digits ECMA-262 asks
	// for; only where the point goes differs.
	mantissa, exponent, _ := strings.Cut(strconv.FormatFloat(value, 'e', -1, 64), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	power, _ := strconv.Atoi(exponent)
	point := power + 1 // the decimal point sits this many digits into digits
	switch {
	case len(digits) <= point && point <= 21:
		return sign + digits + strings.Repeat("0", point-len(digits))
	case 0 < point && point <= 21:
		return sign + digits[:point] + "." + digits[point:]
	case -6 < point && point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	}
	fraction := ""
	if len(digits) > 1 {
		fraction = "." + digits[1:]
	}
	exponentSign := "+"
	if power < 0 {
		exponentSign, power = "-", -power
	}
	return sign + digits[:1] + fraction + "e" + exponentSign + strconv.Itoa(power)
}

// appendString appends text quoted as JSON.stringify quotes it: `"`, `\` and the control
// characters escaped (\b \f \n \r \t, else \u00xx), and a lone surrogate (a rune of U+D800 to
// U+DFFF, from piRunes) as its escape; everything else as it is.
func appendString(out []byte, text string, toPi bool) []byte {
	out = append(out, '"')
	if toPi {
		for char := range piRunes(text) {
			out = appendChar(out, char)
		}
	} else {
		for _, char := range text {
			out = appendChar(out, char)
		}
	}
	return append(out, '"')
}

const hexDigits = "0123456789abcdef"

func appendChar(out []byte, char rune) []byte {
	switch char {
	case '"', '\\':
		return append(out, '\\', byte(char))
	case '\b':
		return append(out, `\b`...)
	case '\f':
		return append(out, `\f`...)
	case '\n':
		return append(out, `\n`...)
	case '\r':
		return append(out, `\r`...)
	case '\t':
		return append(out, `\t`...)
	}
	if char < 0x20 || firstSurrogate <= char && char <= lastSurrogate {
		return append(out, '\\', 'u', hexDigits[char>>12], hexDigits[char>>8&0xF], hexDigits[char>>4&0xF], hexDigits[char&0xF])
	}
	return utf8.AppendRune(out, char)
}
