package manifest

import "fmt"

// CheckText holds text that did not come from a document (a remote plugin's
// tool descriptions, say) to the rules of text people and the model read:
// no invisible, bidi-override, tag or control characters; multiline allows
// newlines and tabs.
func CheckText(s string, multiline bool) error {
	if err := checkText(s, multiline); err != nil {
		return fmt.Errorf("%s at byte %d", err.msg, err.Off)
	}
	return nil
}

// CheckSchemaText holds every string of a decoded JSON Schema, keys
// included, to CheckText's multiline rules, as the parser does for a
// document's schemas; it names the first string refused.
func CheckSchemaText(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if err := CheckText(k, true); err != nil {
				return fmt.Errorf("key %q %v", k, err)
			}
			if err := CheckSchemaText(c); err != nil {
				return err
			}
		}
	case []any:
		for _, c := range x {
			if err := CheckSchemaText(c); err != nil {
				return err
			}
		}
	case string:
		if err := CheckText(x, true); err != nil {
			return fmt.Errorf("a string %v", err)
		}
	}
	return nil
}
