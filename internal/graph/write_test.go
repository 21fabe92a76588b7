package graph

import "testing"

func TestWriteOutcome(t *testing.T) {
	vis := func(v uint8, data string) *Link {
		return &Link{Visibility: v, Time: 5, Version: 1, Data: []byte(data)}
	}
	for _, c := range []struct {
		name   string
		old, l *Link
		res    WriteResult
		delta  int64
	}{
		{"new visible", nil, vis(VisibilityDefault, "a"), Inserted, 1},
		{"new hidden", nil, vis(VisibilityHidden, "a"), Inserted, 0},
		{"same", vis(VisibilityDefault, "a"), vis(VisibilityDefault, "a"), Unchanged, 0},
		{"other data", vis(VisibilityDefault, "a"), vis(VisibilityDefault, "b"), Updated, 0},
		{"hidden to visible", vis(VisibilityHidden, "a"), vis(VisibilityDefault, "a"), Updated, 1},
		{"visible to hidden", vis(VisibilityDefault, "a"), vis(VisibilityHidden, "a"), Updated, -1},
		{"hidden stays hidden", vis(VisibilityHidden, "a"), vis(VisibilityHidden, "a"), Unchanged, 0},
		{"nil and empty data agree", vis(VisibilityDefault, ""), &Link{Visibility: VisibilityDefault, Time: 5, Version: 1}, Unchanged, 0},
	} {
		var old Link
		if c.old != nil {
			old = *c.old
		}
		if res, d := WriteOutcome(c.old != nil, old, c.l); res != c.res || d != c.delta {
			t.Errorf("%s: %s %+d, want %s %+d", c.name, res, d, c.res, c.delta)
		}
	}
}
