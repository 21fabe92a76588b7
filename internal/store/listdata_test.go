package store

import "testing"

func TestListDataCopiesAndKeepsItsBuffer(t *testing.T) {
	keep := new([]byte)
	d := ListDataFrom(keep)
	a, b := d.Add([]byte("ab")), d.Add([]byte("cd"))
	if string(a) != "ab" || string(b) != "cd" || cap(a) != 2 {
		t.Fatalf("copies %q (cap %d) and %q; want \"ab\" capped at 2 and \"cd\"", a, cap(a), b)
	}
	if e := d.Add(nil); e == nil || len(e) != 0 {
		t.Fatalf("an empty value gave %#v, want an empty non-nil slice", e)
	}
	d.Keep(keep)
	if len(*keep) != 0 || &(*keep)[:1][0] != &a[0] {
		t.Fatal("the session did not keep the list's buffer, emptied")
	}
	// The next list starts in the kept buffer.
	next := ListDataFrom(keep)
	if c := next.Add([]byte("x")); &c[0] != &a[0] {
		t.Fatal("the next list's data is not in the kept buffer")
	}
	big := ListDataFrom(keep)
	big.Add(make([]byte, MaxListBuf+1))
	big.Keep(keep)
	if cap(*keep) > MaxListBuf {
		t.Fatalf("a buffer of %d bytes was kept; the limit is %d", cap(*keep), MaxListBuf)
	}
	var none ListData
	none.Add([]byte("y"))
	none.Keep(nil) // no session: nothing to keep, no panic
}
