package interpreter_test

import (
	"context"
	"fmt"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
)

func ExampleProgram_Run() {
	p, _ := manifest.Parse(manifest.Files{
		"PLUGIN.md": []byte("---\nid: hello\nname: Hello\ndescription: Greets.\nversion: 1.0.0\n---\nSay hello.\n"),
		"tools/greet.yaml": []byte(`description: Greets someone.
effect: read
input:
  type: object
  properties: { name: { type: string } }
  required: [name]
steps:
  - jq: '"Hello, " + $input.name'
    as: text
  - return: '{text: $text, length: ($text | length)}'
`),
	})
	prog, diags := interpreter.Compile(p)
	if diags.HasErrors() {
		fmt.Println(diags.Error())
		return
	}
	res, err := prog.Run(context.Background(), "greet", map[string]any{"name": "燕园"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.JSON))
	_, err = prog.Run(context.Background(), "greet", map[string]any{"name": 3})
	fmt.Println(err)
	// Output:
	// {"length":9,"text":"Hello, 燕园"}
	// input of tool "greet": at /name: got number, want string
}
