package workload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkbench/linkbench/internal/config"
	"github.com/linkbench/linkbench/internal/gen"
)

// Metadata keys a load records about the graph it wrote.
const (
	MetaStartID1      = "startid1"
	MetaMaxID1        = "maxid1"
	MetaLinkTypeCount = "link_type_count"
	MetaNLinksFunc    = "nlinks_func"
	MetaRandomID2Max  = "randomid2max"
	MetaDataFile      = "data_file"
	MetaDataHash      = "data_file_sha256"
	MetaSeed          = "load_random_seed"
	MetaToolVersion   = "tool_version"
	MetaLoadedAt      = "loaded_at"
	MetaComplete      = "load_complete"
	// MetaPlacement is gen.PlacementVersion, the way degrees were placed
	// on ids when the graph was loaded.
	MetaPlacement = "placement_version"
)

// GraphMeta is what load records, so later runs can check they drive the
// graph that was loaded.
func GraphMeta(cfg *config.Config, dataHash, toolVersion string, complete bool) map[string]string {
	return map[string]string{
		MetaStartID1:      strconv.FormatInt(cfg.StartID1, 10),
		MetaMaxID1:        strconv.FormatInt(cfg.MaxID1, 10),
		MetaLinkTypeCount: strconv.Itoa(cfg.LinkTypeCount),
		MetaNLinksFunc:    cfg.NLinks.Func,
		MetaRandomID2Max:  strconv.FormatInt(cfg.RandomID2Max, 10),
		MetaDataFile:      cfg.DataFile,
		MetaDataHash:      dataHash,
		MetaSeed:          strconv.FormatInt(cfg.LoadRandomSeed, 10),
		MetaToolVersion:   toolVersion,
		MetaLoadedAt:      time.Now().UTC().Format(time.RFC3339),
		MetaComplete:      strconv.FormatBool(complete),
		MetaPlacement:     gen.PlacementVersion,
	}
}

// CheckPlacement refuses a graph that linkbench loaded with another degree
// placement than this one's (graphs loaded before placement_version was
// recorded put degrees on other ids): correlated accesses and id2 choices
// would aim at ids whose degrees are not the ones this driver computes. A
// graph without metadata (loaded by the reference) passes.
func CheckPlacement(meta map[string]string) error {
	if len(meta) == 0 || meta[MetaPlacement] == gen.PlacementVersion {
		return nil
	}
	v := meta[MetaPlacement]
	if v == "" {
		v = "1"
	}
	return fmt.Errorf("the store holds a graph loaded by an older linkbench that placed degrees on other ids (placement version %s, this version uses %s, the reference's); load it again with `linkbench load --truncate`", v, gen.PlacementVersion)
}

// UserSet reports whether the user chose key's value (main config file or
// -D), as opposed to a default or the workload file.
func UserSet(cfg *config.Config, key string) bool {
	if cfg.Props == nil {
		return false
	}
	e, ok := cfg.Props.Lookup(key)
	return ok && e.Origin >= config.FromMain
}

// AdoptMeta reconciles the config with the metadata of a loaded graph: a
// graph parameter the user did not set is taken from the metadata (and
// listed in adopted); one the user set to a different value is an error
// naming every difference. An empty meta (graph loaded by another tool)
// changes nothing.
func AdoptMeta(cfg *config.Config, meta map[string]string, dataHash string) (adopted []string, err error) {
	if len(meta) == 0 {
		return nil, nil
	}
	var diffs []string
	ints := []struct {
		key string
		dst *int64
	}{
		{MetaStartID1, &cfg.StartID1},
		{MetaMaxID1, &cfg.MaxID1},
		{MetaRandomID2Max, &cfg.RandomID2Max},
	}
	for _, f := range ints {
		v, ok := meta[f.key]
		if !ok {
			continue
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n == *f.dst {
			continue
		}
		if UserSet(cfg, f.key) {
			diffs = append(diffs, fmt.Sprintf("%s: loaded graph has %d, config says %d (%s)", f.key, n, *f.dst, cfg.Props.Where(f.key)))
			continue
		}
		*f.dst = n
		adopted = append(adopted, fmt.Sprintf("%s=%d", f.key, n))
	}
	if v, ok := meta[MetaLinkTypeCount]; ok {
		if n, perr := strconv.Atoi(v); perr == nil && n != cfg.LinkTypeCount {
			if UserSet(cfg, MetaLinkTypeCount) {
				diffs = append(diffs, fmt.Sprintf("link_type_count: loaded graph has %d, config says %d (%s)", n, cfg.LinkTypeCount, cfg.Props.Where(MetaLinkTypeCount)))
			} else {
				cfg.LinkTypeCount = n
				adopted = append(adopted, fmt.Sprintf("link_type_count=%d", n))
			}
		}
	}
	if v, ok := meta[MetaNLinksFunc]; ok && v != cfg.NLinks.Func {
		diffs = append(diffs, fmt.Sprintf("nlinks_func: loaded graph has %q, config says %q", v, cfg.NLinks.Func))
	}
	if v, ok := meta[MetaDataHash]; ok && v != "" && dataHash != "" && v != dataHash && cfg.NLinks.Func == "real" {
		diffs = append(diffs, fmt.Sprintf("data_file: the loaded graph used %s (sha256 %.12s), config uses %s (sha256 %.12s)", meta[MetaDataFile], v, cfg.DataFile, dataHash))
	}
	if v, ok := meta[MetaComplete]; ok && v == "false" {
		diffs = append(diffs, "the load of this graph did not complete; finish it with `linkbench load --resume`, or load again with --truncate")
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return adopted, fmt.Errorf("the config does not match the loaded graph:\n  %s\nremove these settings to use the loaded graph's values, or load again with them", strings.Join(diffs, "\n  "))
	}
	return adopted, nil
}

// Keys of an interrupted load's record, which load --resume reads.
const (
	MetaLoadTimeMs = "load_time_ms"
	MetaLoadParams = "load_params"
	// JournalState is the key, under a journal prefix, that says a load
	// with that prefix is under way or was interrupted ("open").
	JournalState = "state"
	JournalOpen  = "open"
)

// JournalPrefix is the metadata prefix of the load journal of one process
// of a load split into shards (0 of 1 for an unsplit load).
func JournalPrefix(shard, shards int) string {
	return fmt.Sprintf("journal.%dof%d.", shard, shards)
}

// LoadParams renders, one key=value per line, every setting that shapes
// the rows a load writes or how it splits them into journal units: a
// resumed load must use exactly these.
func LoadParams(cfg *config.Config, dataHash string, nowMs int64) string {
	lines := []string{
		fmt.Sprintf("startid1=%d", cfg.StartID1),
		fmt.Sprintf("maxid1=%d", cfg.MaxID1),
		fmt.Sprintf("link_type_count=%d", cfg.LinkTypeCount),
		fmt.Sprintf("randomid2max=%d", cfg.RandomID2Max),
		fmt.Sprintf("nlinks=%+v", cfg.NLinks),
		fmt.Sprintf("data_file_sha256=%s", dataHash),
		fmt.Sprintf("link_datasize=%v", cfg.LinkDataSize),
		fmt.Sprintf("node_datasize=%v", cfg.NodeDataSize),
		fmt.Sprintf("link_datagen=%+v", cfg.LinkAddGen),
		fmt.Sprintf("node_datagen=%+v", cfg.NodeAddGen),
		fmt.Sprintf("load_random_seed=%d", cfg.LoadRandomSeed),
		fmt.Sprintf("load_time_ms=%d", nowMs),
		fmt.Sprintf("loader_chunk_size=%d", cfg.LoaderChunkSize),
		fmt.Sprintf("generate_nodes=%t", cfg.GenerateNodes),
		fmt.Sprintf("placement_version=%s", gen.PlacementVersion),
	}
	return strings.Join(lines, "\n")
}

// DiffLoadParams lists the settings that differ between a recorded
// LoadParams and the current one, as "key: recorded X, now Y".
func DiffLoadParams(recorded, now string) []string {
	old := map[string]string{}
	for _, l := range strings.Split(recorded, "\n") {
		k, v, _ := strings.Cut(l, "=")
		old[k] = v
	}
	var diffs []string
	for _, l := range strings.Split(now, "\n") {
		k, v, _ := strings.Cut(l, "=")
		if o, ok := old[k]; !ok || o != v {
			diffs = append(diffs, fmt.Sprintf("%s: interrupted load had %s, now %s", k, o, v))
		}
	}
	return diffs
}
