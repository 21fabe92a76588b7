package store_test

import (
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// TestAutoBool: unset and auto (any case) leave the choice to the store,
// the boolean spellings are kept, and anything else is refused naming the
// key, where it was set and the choices.
func TestAutoBool(t *testing.T) {
	for _, tc := range []struct {
		v       string
		b, auto bool
	}{
		{"", false, true},
		{"auto", false, true},
		{" AUTO ", false, true},
		{"true", true, false},
		{"on", true, false},
		{"false", false, false},
		{"0", false, false},
	} {
		p := store.MapProps{}
		if tc.v != "" {
			p["k"] = tc.v
		}
		b, auto, err := store.AutoBool(p, "k")
		if err != nil || b != tc.b || auto != tc.auto {
			t.Errorf("%q: %v, auto %v, %v; want %v, auto %v", tc.v, b, auto, err, tc.b, tc.auto)
		}
	}
	_, _, err := store.AutoBool(store.MapProps{"pg_write_function": "maybe"}, "pg_write_function")
	if err == nil || !strings.Contains(err.Error(), "pg_write_function (options)") || !strings.Contains(err.Error(), `"maybe"`) || !strings.Contains(err.Error(), "use auto, true or false") {
		t.Errorf("a bad value: %v", err)
	}
}
