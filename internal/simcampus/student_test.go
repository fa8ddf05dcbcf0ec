package simcampus

import (
	"strings"
	"testing"
)

// The demo student's number and name are the ones the fixtures show.
func TestDemoStudentInFixtures(t *testing.T) {
	for _, name := range []string{"fixtures/card/card.json.tmpl", "fixtures/portal/scores.json"} {
		b, err := fixtureFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), DemoStudentID) || !strings.Contains(string(b), DemoStudentName) {
			t.Errorf("%s does not show the demo student %s %s", name, DemoStudentID, DemoStudentName)
		}
	}
}
