package interpreter_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func portal(t testing.TB) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != "s3cr3t-session" {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		if r.URL.EscapedPath() != "/api/classrooms/%E4%BA%8C%E6%95%99/free" || r.URL.Query().Get("lang") != "zh" {
			http.Error(w, "not found: "+r.URL.EscapedPath(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"rooms": []any{
			map[string]any{"name": "二教101", "capacity": 120},
			map[string]any{"name": "二教203", "capacity": 60},
		}})
	}
}

func TestSkeleton(t *testing.T) {
	p := readSkeleton(t)
	prog := compile(t, p)
	srv := campus(t, portal(t))
	c := call(t, p, srv, "portal")
	res, err := run(t, prog, "free", map[string]any{"building": "二教"}, interpreter.WithTransport(c))
	require.NoError(t, err)
	assert.JSONEq(t, `{"building":"二教","rooms":[{"room":"二教101","seats":120},{"room":"二教203","seats":60}]}`, string(res.JSON))
	assert.Equal(t, 4, res.Steps)

	// The fail step: the portal answers 404 for another building.
	_, err = run(t, prog, "free", map[string]any{"building": "三教"}, interpreter.WithTransport(call(t, p, srv, "portal")))
	var se *interpreter.StepError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "tools/free.yaml:19:5: step 2 (fail): The portal answered 404", err.Error())
	assert.Equal(t, 2, se.Index)
}

func TestSkeletonInput(t *testing.T) {
	prog := compile(t, readSkeleton(t))
	_, err := run(t, prog, "free", map[string]any{"building": 3})
	var ie *interpreter.InputError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "/building")
	_, err = run(t, prog, "free", map[string]any{})
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "building")
}
