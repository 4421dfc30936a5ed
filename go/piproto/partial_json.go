package piproto

import "strings"

// partialJSON completes the argument text of a streaming tool call into the text of a
// JSON object, as the comment on ToolCallDeltaEvent in event.proto specifies: an unfinished
// string is closed (an escape cut short is dropped), a number cut short keeps its longest prefix
// that is a number, a cut-short true, false or null is completed, a member or element that has
// not reached its value is dropped, and open arrays and objects are closed. Text that cannot
// complete into an object gives "{}".
//
// It reads each delta once and keeps only the state the completion needs (the open containers,
// the token being read and where the text was last whole), so scanning a call whose arguments
// arrive in many deltas costs time linear in their length; only building each completed text
// copies it. Every character with a meaning in JSON is ASCII, so it reads bytes.
type partialJSON struct {
	read      int // bytes of the text read so far
	stack     []openContainer
	token     tokenKind
	start     int // where the token began
	escape    int // in a string: 0, 1 after a backslash, 2 to 5 while the hex digits of \u arrive
	escapeAt  int // where that escape began
	number    numberState
	numberEnd int // where the token's longest prefix that is a number ends; 0 when it has none
	literal   string
	started   bool // the top value has begun
	finished  bool // the top value has ended
	broken    bool // the text is no prefix of one JSON object

	lastCut  int // the completion built last: the text up to lastCut, then lastTail
	lastTail string
	last     string
}

// openContainer is an object or array not yet closed.
type openContainer struct {
	closer byte // '}' or ']'
	next   expecting
	keep   int // the text up to here is whole: cutting here drops an unfinished member or element
}

// expecting is what an open container waits for next.
type expecting uint8

const (
	keyOrEnd expecting = iota
	key
	colon
	value
	valueOrEnd
	afterValue
)

type tokenKind uint8

const (
	noToken tokenKind = iota
	stringToken
	keyToken
	numberToken
	literalToken
)

// numberState is how far a number has come; each state but numberBroken is a prefix of a number.
type numberState uint8

const (
	numberSign     numberState = iota // "-"
	numberZero                        // "0", "-0"
	numberInteger                     // "12"
	numberPoint                       // "12."
	numberFraction                    // "12.5"
	numberExponent                    // "12e"
	numberExpSign                     // "12e-"
	numberExpDigit                    // "12e5"
	numberBroken                      // no more text makes it a number
)

// isComplete reports whether a number in this state is a whole number.
func (s numberState) isComplete() bool {
	return s == numberZero || s == numberInteger || s == numberFraction || s == numberExpDigit
}

// after is the state once char is added to a number in state s.
func (s numberState) after(char byte) numberState {
	digit := '0' <= char && char <= '9'
	exponent := char == 'e' || char == 'E'
	switch {
	case s == numberSign && char == '0':
		return numberZero
	case s == numberSign && digit, s == numberInteger && digit:
		return numberInteger
	case (s == numberZero || s == numberInteger) && char == '.':
		return numberPoint
	case (s == numberPoint || s == numberFraction) && digit:
		return numberFraction
	case (s == numberZero || s == numberInteger || s == numberFraction) && exponent:
		return numberExponent
	case s == numberExponent && (char == '+' || char == '-'):
		return numberExpSign
	case (s == numberExponent || s == numberExpSign || s == numberExpDigit) && digit:
		return numberExpDigit
	}
	return numberBroken
}

func isNumberChar(char byte) bool {
	return '0' <= char && char <= '9' || strings.IndexByte("+-.eE", char) >= 0
}

// update reads text, the whole argument text so far (what was read before, then more), from
// where the last call stopped, and returns its completion.
func (c *partialJSON) update(text string) string {
	for c.read < len(text) && !c.broken {
		c.step(text[c.read], c.read)
		c.read++
	}
	return c.completed(text)
}

// step reads the character at position at.
func (c *partialJSON) step(char byte, at int) {
	switch c.token {
	case stringToken, keyToken:
		c.inString(char, at)
		return
	case numberToken:
		if isNumberChar(char) {
			if c.number = c.number.after(char); c.number == numberBroken {
				c.broken = true
			} else if c.number.isComplete() {
				c.numberEnd = at + 1
			}
			return
		}
		// The number ends here, and this character is read as what follows it; a number cut
		// short, such as "1e", cannot end.
		if !c.number.isComplete() {
			c.broken = true
			return
		}
		c.valueEnded(at)
	case literalToken:
		read := at - c.start + 1
		switch {
		case c.literal[read-1] != char:
			c.broken = true
		case read == len(c.literal):
			c.valueEnded(at + 1)
		}
		return
	}
	switch {
	case char == ' ' || char == '\t' || char == '\n' || char == '\r':
	case c.finished:
		c.broken = true // something after the object
	default:
		c.betweenTokens(char, at)
	}
}

func (c *partialJSON) inString(char byte, at int) {
	switch {
	case c.escape == 1:
		if strings.IndexByte(`"\/bfnrtu`, char) < 0 {
			c.broken = true
		}
		c.escape = 0
		if char == 'u' {
			c.escape = 2
		}
	case c.escape > 1:
		if !isHexDigit(char) {
			c.broken = true
		}
		c.escape = (c.escape + 1) % 6 // back to 0 after the fourth digit
	case char == '\\':
		c.escape, c.escapeAt = 1, at
	case char == '"' && c.token == keyToken:
		c.token = noToken
		c.top().next = colon
	case char == '"':
		c.valueEnded(at + 1)
	case char < ' ':
		c.broken = true // a raw control character
	}
}

func isHexDigit(char byte) bool {
	return '0' <= char && char <= '9' || 'a' <= char && char <= 'f' || 'A' <= char && char <= 'F'
}

func (c *partialJSON) top() *openContainer { return &c.stack[len(c.stack)-1] }

func (c *partialJSON) betweenTokens(char byte, at int) {
	if len(c.stack) == 0 {
		if c.started {
			c.broken = true
		} else {
			c.valueStarts(char, at)
		}
		return
	}
	inner := c.top()
	switch inner.next {
	case keyOrEnd, key:
		switch {
		case char == '"':
			c.token, c.start = keyToken, at
		case char == '}' && inner.next == keyOrEnd:
			c.close(at)
		default:
			c.broken = true
		}
	case colon:
		if char == ':' {
			inner.next = value
		} else {
			c.broken = true
		}
	case value, valueOrEnd:
		if char == ']' && inner.next == valueOrEnd {
			c.close(at)
		} else {
			c.valueStarts(char, at)
		}
	case afterValue:
		switch {
		case char == ',' && inner.closer == '}':
			inner.next = key
		case char == ',':
			inner.next = value
		case char == inner.closer:
			c.close(at)
		default:
			c.broken = true
		}
	}
}

func (c *partialJSON) valueStarts(char byte, at int) {
	if !c.started {
		c.started = true
		if char != '{' {
			c.broken = true // only an object completes into arguments
			return
		}
	}
	c.start = at
	switch {
	case char == '{':
		c.stack = append(c.stack, openContainer{closer: '}', next: keyOrEnd, keep: at + 1})
	case char == '[':
		c.stack = append(c.stack, openContainer{closer: ']', next: valueOrEnd, keep: at + 1})
	case char == '"':
		c.token = stringToken
	case char == '-':
		c.token, c.number, c.numberEnd = numberToken, numberSign, 0
	case '0' <= char && char <= '9':
		c.token, c.number, c.numberEnd = numberToken, numberSign.after(char), at+1
	case char == 't':
		c.token, c.literal = literalToken, "true"
	case char == 'f':
		c.token, c.literal = literalToken, "false"
	case char == 'n':
		c.token, c.literal = literalToken, "null"
	default:
		c.broken = true
	}
}

func (c *partialJSON) valueEnded(end int) {
	c.token = noToken
	inner := c.top()
	inner.next, inner.keep = afterValue, end
}

func (c *partialJSON) close(at int) {
	c.stack = c.stack[:len(c.stack)-1]
	if len(c.stack) > 0 {
		c.valueEnded(at + 1)
	} else {
		c.finished = true
	}
}

// completed is text, the text read so far, completed into the text of a JSON object, or "{}".
func (c *partialJSON) completed(text string) string {
	if c.broken || !c.started {
		return "{}"
	}
	if c.finished {
		return text
	}
	cut, tail := c.top().keep, ""
	switch c.token {
	case stringToken:
		cut, tail = len(text), `"`
		if c.escape > 0 {
			cut = c.escapeAt
		}
	case numberToken:
		if c.numberEnd > 0 {
			cut = c.numberEnd
		}
	case literalToken:
		cut, tail = c.start, c.literal
	}
	closers := make([]byte, len(c.stack))
	for i, container := range c.stack {
		closers[len(closers)-1-i] = container.closer
	}
	tail += string(closers)
	if c.last != "" && cut == c.lastCut && tail == c.lastTail {
		return c.last // nothing the completion shows has changed: share the text built last
	}
	var built strings.Builder
	built.Grow(cut + len(tail))
	built.WriteString(text[:cut])
	built.WriteString(tail)
	c.lastCut, c.lastTail, c.last = cut, tail, built.String()
	return c.last
}
