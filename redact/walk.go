package redact

import "fmt"

// The walk: the loop that reads one JSON value and writes its redacted
// canonical form, one state at a time.

// Walk states.
const (
	wantValue  = iota // a value starts here
	wantKey           // an object member's key starts here
	afterValue        // a value just ended
)

// walk reads the JSON value in w.in and writes its redacted canonical form
// to w.out. It is a loop over three states with an explicit stack of the
// open arrays and objects, so nesting costs no Go stack. A dropped member is
// written like any other and cut off the output when its value ends: the
// value still has to be checked, and drops are rare. The scalars and the
// ends of members are read in the loop itself: they are most of a
// document, and a call for each costs time (BenchmarkJSON).
func (w *walker) walk() error {
	state := wantValue
	for {
		var err error
		switch state {
		case wantValue:
			w.space()
			if w.i >= len(w.in) {
				return w.syntaxError("unexpected end, want a value")
			}
			noMask := w.noMask
			w.noMask = false
			switch c := w.in[w.i]; {
			case c == '{' || c == '[':
				state, err = w.open(c)
			case c == '"':
				at := len(w.out)
				_, err = w.str(!noMask)
				if w.pairKey || len(w.stack) > 0 && !w.stack[len(w.stack)-1].object && w.stack[len(w.stack)-1].members == 0 {
					w.notePair(at)
				}
				state = afterValue
			case c == '-' || isDigit(c):
				err = w.number(!noMask)
				state = afterValue
			case c == 't' || c == 'f' || c == 'n':
				err = w.literal()
				state = afterValue
			default:
				err = w.syntaxError("want a value")
			}
		case wantKey:
			err = w.key()
			state = wantValue
		case afterValue:
			if len(w.stack) == 0 {
				return w.end()
			}
			f := &w.stack[len(w.stack)-1]
			if f.drop >= 0 {
				w.out = w.out[:f.drop]
				f.drop = -1
			} else {
				f.members++
			}
			w.space()
			if w.i >= len(w.in) {
				return w.syntaxError("unexpected end, want ',' or a closing bracket")
			}
			switch c := w.in[w.i]; {
			case c == ',':
				w.i++
				if f.object {
					w.space()
					state = wantKey
				} else {
					w.out = append(w.out, ',')
					state = wantValue
				}
			case c == '}' && f.object, c == ']' && !f.object:
				w.i++
				w.out = append(w.out, c)
				if f.name[1] > 0 {
					w.closePair(f)
				}
				w.stack = w.stack[:len(w.stack)-1]
			default:
				err = w.syntaxError("want ',' or a closing bracket")
			}
		}
		if err != nil {
			return err
		}
	}
}

// open opens the array or object that c, at w.i, starts, and returns the
// state after it: its first key or value, or, when it is empty, after it.
func (w *walker) open(c byte) (int, error) {
	if len(w.stack) >= MaxDepth {
		return 0, fmt.Errorf("%w: more than %d nested arrays and objects at offset %d", ErrTooDeep, MaxDepth, w.i)
	}
	object := c == '{'
	if len(w.stack) == 0 {
		w.rootObject = object
	}
	fr := frame{object: object, drop: -1}
	if object && len(w.stack) > 0 && w.stack[len(w.stack)-1].object {
		fr.pk = w.lastKey
	}
	w.pairKey = false
	w.stack = append(w.stack, fr)
	w.out = append(w.out, c)
	w.i++
	w.space()
	end := byte(']')
	if object {
		end = '}'
	}
	switch {
	case w.i < len(w.in) && w.in[w.i] == end:
		w.i++
		w.out = append(w.out, end)
		w.stack = w.stack[:len(w.stack)-1]
		return afterValue, nil
	case object:
		return wantKey, nil
	}
	return wantValue, nil
}

// end checks that nothing but whitespace follows the document's value.
func (w *walker) end() error {
	w.space()
	if w.i != len(w.in) {
		return w.syntaxError("data after the value")
	}
	return nil
}
