package fetch_test

import (
	"fmt"

	"github.com/pkuinfo/harness/fetch"
)

func ExampleParseLink() {
	l, err := fetch.ParseLink("https://github.com/pkuinfo/pku-harness-plugins/tree/feature/x/canteen")
	if err != nil {
		panic(err)
	}
	u, _ := l.CloneURL("")
	fmt.Println(l.Kind, l.Owner, l.Repo, l.RefPath, l.Trust())
	fmt.Println(u)

	_, err = fetch.ParseLink("https://github.com.evil/a/b/tree/main/x")
	fmt.Println(err)
	// Output:
	// github pkuinfo pku-harness-plugins feature/x/canteen official
	// https://github.com/pkuinfo/pku-harness-plugins.git
	// link "https://github.com.evil/a/b/tree/main/x": host "github.com.evil" is not github.com; expected https://github.com/OWNER/REPO/tree/REF/PATH (a folder) or https://github.com/OWNER/REPO/blob/REF/PATH/PLUGIN.md
}
