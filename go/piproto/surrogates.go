package piproto

import (
	"bytes"
	"iter"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Lone surrogates: text pi writes that a protobuf string cannot hold.
//
// JavaScript strings are UTF-16, and pi writes whatever they hold: a stream cut inside a
// surrogate pair leaves a lone surrogate, which JSON.stringify writes as an escape ("\ud83d").
// Protobuf strings are UTF-8, which has no lone surrogates. So the pi-JSON codec reads each of
// the 2,048 surrogates U+D800 + k as U+10F800 + k, the top of plane 16 (private use), and writes
// it back as its escape. To keep that reversible, a character of that range in the text itself
// (U+10F7FF to U+10FFFF) is read as U+10F7FF followed by itself. Every runtime's codec maps the
// same way (docs/transcripts.md; the corpus's pi_json/lone-surrogate* cases pin it).
const (
	firstSurrogate = 0xD800
	lastSurrogate  = 0xDFFF
	firstMapped    = 0x10F800 // where surrogate U+D800 + k is read: U+10F800 + k
	rangeEscape    = 0x10F7FF // in front of a character of the range that was in the text itself
)

// surrogatesToProto rewrites JSON text so that decoding it gives strings a protobuf string
// holds. encoding/json would read a lone surrogate's escape as U+FFFD, so each becomes its mapped
// character; and in pi's text (fromPi) a character of the mapped range gets rangeEscape in
// front. Text this runtime holds is mapped already: only a lone escape, which its writer never
// writes but a user may, is read as the character it stands for.
func surrogatesToProto(text []byte, fromPi bool) []byte {
	if !bytes.Contains(text, []byte(`\u`)) && (!fromPi || bytes.IndexByte(text, 0xF4) < 0) {
		return text // no escape, and no character of plane 16 (UTF-8 0xF4 ...)
	}
	out := make([]byte, 0, len(text)+16)
	inString := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case !inString || c == '"':
			inString = inString != (c == '"')
			out = append(out, c)
			i++
		case c == '\\' && i+1 < len(text) && text[i+1] != 'u':
			out = append(out, text[i:i+2]...) // \" or \\ among them: the quote or the u is not special
			i += 2
		case c == '\\':
			unit, ok := escapedUnit(text, i)
			switch {
			case !ok || !utf16.IsSurrogate(unit):
				out = append(out, text[i:min(i+6, len(text))]...) // the decoder judges a bad escape
				i += 6
			case unit < 0xDC00 && i+12 <= len(text):
				if low, ok := escapedUnit(text, i+6); ok && low >= 0xDC00 && low <= lastSurrogate {
					if fromPi && utf16.DecodeRune(unit, low) >= rangeEscape {
						out = utf8.AppendRune(out, rangeEscape)
					}
					out = append(out, text[i:i+12]...) // a pair: the decoder reads it
					i += 12
					continue
				}
				fallthrough
			default:
				out = utf8.AppendRune(out, firstMapped+unit-firstSurrogate)
				i += 6
			}
		case fromPi && c == 0xF4:
			char, size := utf8.DecodeRune(text[i:])
			if char >= rangeEscape {
				out = utf8.AppendRune(out, rangeEscape)
			}
			out = append(out, text[i:i+size]...)
			i += size
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// escapedUnit is the UTF-16 code unit of the \uXXXX escape at text[at:], if it is one.
func escapedUnit(text []byte, at int) (rune, bool) {
	if at+6 > len(text) || text[at] != '\\' || text[at+1] != 'u' {
		return 0, false
	}
	unit, err := strconv.ParseUint(string(text[at+2:at+6]), 16, 16)
	return rune(unit), err == nil
}

// piRunes is text as pi's: the characters of text, with each mapped character its surrogate
// again (a rune of U+D800 to U+DFFF, which only an escape can write) and rangeEscape taken from
// in front of the character of the range it marks.
func piRunes(text string) iter.Seq[rune] {
	return func(yield func(rune) bool) {
		escaped := false // the character before was rangeEscape
		for _, char := range text {
			switch {
			case escaped && char >= rangeEscape:
				escaped = false
				if !yield(char) {
					return
				}
				continue
			case escaped:
				escaped = false
				if !yield(rangeEscape) { // a lone rangeEscape stays
					return
				}
			}
			switch {
			case char == rangeEscape:
				escaped = true
			case char >= firstMapped:
				if !yield(firstSurrogate + char - firstMapped) {
					return
				}
			default:
				if !yield(char) {
					return
				}
			}
		}
		if escaped {
			yield(rangeEscape)
		}
	}
}
