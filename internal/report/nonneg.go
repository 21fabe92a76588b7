package report

import (
	"math"
	"reflect"
	"strings"
)

// NonNegative sets, in v (a pointer), every figure whose JSON name is a
// length of time or a rate (a name ending in sec, secs or seconds:
// elapsed_sec, duration_sec, ops_per_sec, ...) that is negative, NaN or
// infinite to 0. A phase stopped before it began to measure (during its
// warm-up) has no negative length, and no written figure says otherwise;
// the results writers call it on what they write.
func NonNegative(v any) { clampTimes(reflect.ValueOf(v), false) }

// timeName reports whether a JSON field name is a length of time or a rate.
func timeName(name string) bool {
	return strings.HasSuffix(name, "sec") || strings.HasSuffix(name, "secs") || strings.HasSuffix(name, "seconds")
}

func clampTimes(v reflect.Value, timed bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clampTimes(v.Elem(), timed)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			clampTimes(v.Field(i), timeName(name))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			clampTimes(v.Index(i), timed)
		}
	case reflect.Float64, reflect.Float32:
		if f := v.Float(); timed && v.CanSet() && !(f >= 0 && !math.IsInf(f, 0)) {
			v.SetFloat(0)
		}
	}
}
