package config

import (
	"fmt"
	"maps"
	"slices"
)

// phaseKeys are the keys a phase may set for itself (Derive), each with
// how its typed field is read.
var phaseKeys = map[string]func(b *builder, c *Config){
	"requests": func(b *builder, c *Config) {
		c.Requests = max(b.int64("requests", -1<<62), 0)
		b.atMost("requests", c.Requests, MaxRequests)
	},
	"maxtime":      func(b *builder, c *Config) { c.MaxTime = b.seconds("maxtime") },
	"loops":        func(b *builder, c *Config) { c.Loops = b.int("loops", 1) },
	"arrival_rate": func(b *builder, c *Config) { c.ArrivalRate = b.float("arrival_rate", 0, 1e9) },
	"stages":       func(b *builder, c *Config) { b.stages(c) },
}

// Derive returns a copy of c in which each key of values has its value,
// recorded in the copy's Props with origin FromPhase and the reason why
// ("sweep point 3 of 12"): a phase that runs with settings of its own
// works on such a copy, and its results record what ran. c is not
// written. Only the request phase's requests, maxtime, loops,
// arrival_rate and stages can be set this way.
func (c *Config) Derive(why string, values map[string]string) (*Config, error) {
	d := *c
	props := newProps()
	if c.Props != nil {
		props.m = maps.Clone(c.Props.m)
	}
	d.Props = props
	var problems []string
	b := &builder{cfg: &d, props: props, warn: func(string, ...any) {},
		fail: func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		read, ok := phaseKeys[k]
		if !ok {
			return nil, fmt.Errorf("%s: %s cannot be set for one phase", why, k)
		}
		props.m[k] = Entry{Key: k, Value: values[k], Origin: FromPhase, Why: why}
		read(b, &d)
	}
	b.phaseLength(&d)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return &d, nil
}
