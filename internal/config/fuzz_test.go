package config

import (
	"strings"
	"testing"
)

// FuzzParseProperties: no input makes the parser or the config builder
// panic; rejected input gives an error naming the file.
// Reliability(input): any text as a .properties file | no panic; rejections name the file (seed corpus in testdata/fuzz; `make test` fuzzes it with 100,000 inputs)
func FuzzParseProperties(f *testing.F) {
	f.Add("maxid1 = 100\nloaders: 2\n")
	f.Add("k = \\u00zz\n")
	f.Add("a\\\n")
	f.Add("addlink = 1e400\nmaxid1 = -5\n")
	f.Fuzz(func(t *testing.T, text string) {
		kv, err := parseProperties(text, "fuzz.properties")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.properties") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var overrides []string
		for _, p := range kv {
			if !strings.Contains(p.key, "=") && p.key != "workload_file" && p.key != "data_file" && !strings.HasPrefix(p.key, "password") {
				overrides = append(overrides, p.key+"="+p.value)
			}
		}
		_, _, _ = Load(Source{Overrides: overrides})
	})
}
