package store_test

import (
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store"
)

// TestLinkWrites: unset and reference (any case) are the reference's
// statements, routine the server's routine, and anything else (the old
// auto included) is refused naming the key, where it was set and the
// choices.
func TestLinkWrites(t *testing.T) {
	for _, tc := range []struct {
		v       string
		routine bool
	}{
		{"", false},
		{"reference", false},
		{" Reference ", false},
		{"routine", true},
		{"ROUTINE", true},
	} {
		p := store.MapProps{}
		if tc.v != "" {
			p["link_writes"] = tc.v
		}
		routine, err := store.LinkWrites(p)
		if err != nil || routine != tc.routine {
			t.Errorf("%q: routine %v, %v; want %v", tc.v, routine, err, tc.routine)
		}
	}
	for _, v := range []string{"auto", "true", "maybe"} {
		_, err := store.LinkWrites(store.MapProps{"link_writes": v})
		if err == nil || !strings.Contains(err.Error(), "link_writes (options)") || !strings.Contains(err.Error(), `"`+v+`"`) || !strings.Contains(err.Error(), "reference (the default) or routine") {
			t.Errorf("%q: %v", v, err)
		}
	}
}

// TestRemoved: a key an earlier linkbench read is refused with what
// replaced it, and only when it is set.
func TestRemoved(t *testing.T) {
	if err := store.Removed(store.MapProps{}, "pg_write_function", "use link_writes"); err != nil {
		t.Fatal(err)
	}
	err := store.Removed(store.MapProps{"pg_write_function": "true"}, "pg_write_function", "use link_writes = routine")
	if err == nil || err.Error() != "pg_write_function (options) was removed: use link_writes = routine" {
		t.Fatalf("%v", err)
	}
}
