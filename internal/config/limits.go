package config

import "strconv"

// Upper bounds checked before any work. Each is far beyond any published
// LinkBench setup; a larger value is a typo (1e18 for 1e8) that would
// otherwise spin for hours in a pre-computation or exhaust memory. The
// reasons are the ones the error messages and docs/reliability.md give.
const (
	// MaxID1 bounds maxid1: 1e12 ids make about 4.4e12 links with the
	// shipped degree distribution, some 400 TB of rows, a thousand times
	// the largest published LinkBench graphs (1e9 ids).
	MaxID1 = 1_000_000_000_000
	// MaxRequesters bounds requesters: each one is a goroutine with its own
	// connection, statistics and buffers (about 100 KB); servers accept a
	// few hundred to a few thousand connections.
	MaxRequesters = 10_000
	// MaxLoaders bounds loaders: each one holds a connection and a batch
	// of up to bulk_insert_count links.
	MaxLoaders = 1024
	// MaxListLinks bounds nlinks_default and nlinks_config: one list of
	// 1e7 links is about 1 GB of rows, 580 times the longest list of the
	// measured distribution (17,234 links).
	MaxListLinks = 10_000_000
	// MaxMultiget bounds link_multiget_dist_max: the ids of one multiget
	// go into one statement (MySQL allows 65,535 placeholders).
	MaxMultiget = 10_000
	// MaxRetryAttempts bounds retry_attempts.
	MaxRetryAttempts = 1000
	// MaxBatchMemory bounds loaders x bulk_insert_count x 255 bytes, the
	// memory the loaders' link batches take.
	MaxBatchMemory = 8 << 30
)

var limitReasons = map[string]string{
	"maxid1":                 "1e12 ids make about 4.4e12 links, some 400 TB of rows",
	"requesters":             "each requester holds a connection and about 100 KB",
	"loaders":                "each loader holds a connection and a batch of links",
	"nlinks_default":         "one list of 1e7 links is about 1 GB of rows",
	"nlinks_config":          "one list of 1e7 links is about 1 GB of rows",
	"link_multiget_dist_max": "the ids of one multiget go into one statement",
	"retry_attempts":         "a transient error retried more often is not transient",
	"requests":               "1e14 requests take three years at a million requests/s",
}

// atMost fails when the value of key is above limit.
func (b *builder) atMost(key string, v, limit int64) {
	if v > limit {
		b.fail("%s: expected at most %s (%s; see docs/reliability.md)", b.at(key), grouped(limit), limitReasons[key])
	}
}

// grouped prints n with thousands separators.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
