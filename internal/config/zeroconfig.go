package config

// ZeroConfig returns the presets of a run without -c: the laptop-scale
// benchmark on the embedded SQLite store with the shipped 2017 workload
// (config/FBWorkload.properties). They win over the built-in defaults and
// the workload file, not over -D (Source.Defaults).
func ZeroConfig() map[string]string {
	return map[string]string{
		"store":               "sqlite",
		"workload_file":       "config/FBWorkload.properties",
		"data_dir":            "./linkbench-data",
		"maxid1":              "100001",
		"loaders":             "4",
		"requesters":          "4",
		"maxtime":             "60",
		"warmup_time":         "5",
		"requests":            "0",
		"max_failed_requests": "100",
		"progressfreq":        "10",
	}
}

// StoreKeys are the keys one store reads beyond linkbench's own (its
// registry entry's), for the documentation and `linkbench config --all`.
type StoreKeys struct {
	Store string
	Keys  []Key
}
