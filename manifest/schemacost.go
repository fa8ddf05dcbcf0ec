package manifest

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxValidationSteps bounds the subschema applications that checking one
// input against its tool's schema may take. A document's author writes the
// schema and the agent (which untrusted text can steer) writes the input:
// a schema whose anyOf branches refer back to it, checked against a
// 20-deep array, took 30 s and 5 GB. CheckInput counts the applications
// first, without checking anything, and refuses an input over the bound.
const MaxValidationSteps = 200_000

// MaxInputDepth bounds how deeply a call's input may nest.
const MaxInputDepth = 64

// CheckInputBounds refuses an input before it is validated against s
// when it nests deeper than MaxInputDepth or when checking it would take
// more than MaxValidationSteps subschema applications; nil means s.Validate
// may run. Every input a document or a caller writes is checked through
// it: the agent's call, a data source's or command's fixed input at lint.
func CheckInputBounds(s *jsonschema.Schema, v any) error {
	if inputDepth(v, MaxInputDepth) > MaxInputDepth {
		return fmt.Errorf("the input nests deeper than %d levels", MaxInputDepth)
	}
	if validationSteps(s, v, MaxValidationSteps) > MaxValidationSteps {
		return fmt.Errorf("checking the input against the tool's schema would take more than %d steps", MaxValidationSteps)
	}
	return nil
}

// maxInPlace bounds schemas applied to one value through $ref, allOf and
// the like in a chain (a longer chain is a reference cycle).
const maxInPlace = 256

// validationSteps counts, as an upper bound, the subschema applications of
// validating v against s: every applicator is taken as applying (both
// branches of if, every anyOf branch, additionalProperties to every key). It
// stops counting past limit and returns limit+1.
func validationSteps(s *jsonschema.Schema, v any, limit int) int {
	c := stepCounter{left: limit + 1}
	c.apply(s, v, 0)
	return limit + 1 - c.left
}

type stepCounter struct{ left int }

func (c *stepCounter) apply(s *jsonschema.Schema, v any, chain int) {
	if s == nil || c.left <= 0 {
		return
	}
	if chain > maxInPlace {
		c.left = 0
		return
	}
	c.left--
	// in place: the same value
	var dyn *jsonschema.Schema
	if s.DynamicRef != nil {
		dyn = s.DynamicRef.Ref
	}
	for _, x := range [...]*jsonschema.Schema{s.Ref, s.RecursiveRef, dyn, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
		c.apply(x, v, chain+1)
	}
	for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, x := range l {
			c.apply(x, v, chain+1)
		}
	}
	for _, x := range s.DependentSchemas {
		c.apply(x, v, chain+1)
	}
	for _, x := range s.Dependencies {
		if x, ok := x.(*jsonschema.Schema); ok {
			c.apply(x, v, chain+1)
		}
	}
	// the value's members
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if c.left <= 0 {
				return
			}
			c.apply(s.PropertyNames, k, 0)
			c.apply(s.Properties[k], e, 0)
			for _, x := range s.PatternProperties {
				c.apply(x, e, 0)
			}
			if x, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
				c.apply(x, e, 0)
			}
			c.apply(s.UnevaluatedProperties, e, 0)
		}
	case []any:
		for i, e := range v {
			if c.left <= 0 {
				return
			}
			if i < len(s.PrefixItems) {
				c.apply(s.PrefixItems[i], e, 0)
			}
			switch it := s.Items.(type) {
			case *jsonschema.Schema:
				c.apply(it, e, 0)
			case []*jsonschema.Schema:
				if i < len(it) {
					c.apply(it[i], e, 0)
				}
			}
			if x, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				c.apply(x, e, 0)
			}
			c.apply(s.Items2020, e, 0)
			c.apply(s.Contains, e, 0)
			c.apply(s.UnevaluatedItems, e, 0)
		}
		if s.UniqueItems {
			// pairs compared
			n := len(v)
			c.left -= n * (n - 1) / 2 / 64
		}
	}
}

// inputDepth is how deeply v nests, stopping past limit.
func inputDepth(v any, limit int) int {
	if limit < 0 {
		return 0
	}
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, inputDepth(e, limit-1)+1)
			if d > limit {
				break
			}
		}
	case []any:
		for _, e := range v {
			d = max(d, inputDepth(e, limit-1)+1)
			if d > limit {
				break
			}
		}
	}
	return d
}
