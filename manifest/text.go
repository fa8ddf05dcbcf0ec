package manifest

import (
	"fmt"
	"unicode"
)

// isInvisible reports runes that render as nothing or reorder text: zero-width
// characters, bidi controls, Unicode tag characters and variation-selector
// supplements (both used to smuggle text past a reader).
func isInvisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r == 0x180E, r == 0x3164, r == 0xFEFF, r == 0xFFA0:
		return true
	case r >= 0x200B && r <= 0x200F: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x202A && r <= 0x202E: // bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206F: // word joiner, invisible operators, bidi isolates
		return true
	case r >= 0xFE00 && r <= 0xFE0E: // variation selectors (FE0F, the emoji one, is allowed)
		return true
	case r >= 0xFFF0 && r <= 0xFFFB:
		return true
	case r >= 0xE0000 && r <= 0xE0FFF: // tag characters and variation selector supplement
		return true
	}
	return false
}

// textError is a refused character and its byte offset in the text.
type textError struct {
	Off int
	msg string
}

func (e *textError) Error() string { return e.msg }

// checkText refuses invisible, bidi-override, tag and control characters in
// text that people and the model read. multiline allows newlines and tabs.
func checkText(s string, multiline bool) *textError {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
			if !multiline {
				return &textError{i, "holds a line break or tab"}
			}
		case r == '\r' && multiline:
		case r == unicode.ReplacementChar:
			return &textError{i, "holds invalid UTF-8 or U+FFFD"}
		case isInvisible(r):
			return &textError{i, fmt.Sprintf("holds an invisible or text-reordering character %U", r)}
		case unicode.IsControl(r):
			return &textError{i, fmt.Sprintf("holds a control character %U", r)}
		}
	}
	return nil
}
