package config

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	keys := KeyNames()
	for _, c := range []struct{ word, want string }{
		{"maxid", "maxid1"},
		{"MAXID1X", "maxid1"},
		{"requsters", "requesters"},
		{"reqeusters", "requesters"},
		{"zzzzzzzz", ""},
	} {
		got, ok := Suggest(c.word, keys)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Suggest(%q) = %q, %v; want %q", c.word, got, ok, c.want)
		}
	}
}

// A fuzzed config of one 4 KB key took 80-90 ms to load, all of it in edit
// distances to every key: a key far longer than any known one must not be
// compared letter by letter (editDistance allocates on every call).
func TestSuggestSkipsWordsOfFarOtherLength(t *testing.T) {
	keys := KeyNames()
	for _, word := range []string{strings.Repeat("a", 4000), strings.Repeat("\u00e9", 300), "ab"} {
		var got string
		var ok bool
		allocs := testing.AllocsPerRun(5, func() { got, ok = Suggest(word, keys) })
		if ok {
			t.Errorf("Suggest(%.10q...) = %q; want none", word, got)
		}
		if len(word) > 100 && allocs != 0 {
			t.Errorf("Suggest of a %d-byte word: %.0f allocations; want 0 (no edit distance computed)", len(word), allocs)
		}
	}
}
