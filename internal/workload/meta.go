package workload

import (
	"fmt"
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

// UserSet reports whether the user chose key's value (main config file or
// -D), as opposed to a default or the workload file.
func UserSet(cfg *config.Config, key string) bool {
	if cfg.Props == nil {
		return false
	}
	e, ok := cfg.Props.Lookup(key)
	return ok && e.Origin >= config.FromMain
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

// Keys of the record of a --shard load (a fleet): the processes of one
// load register under MetaFleet (FleetID), the one that finishes the
// graph claims MetaFleetFinisher, and MetaFleetFinished says it did.
const (
	MetaFleet         = "fleet.load"
	MetaFleetFinisher = "fleet.finisher"
	MetaFleetFinished = "fleet.finished"
)

// FleetID is the identity of a --shard load: the settings that shape its
// rows (LoadParams) and its number of shards. Every process of one load
// has the same.
func FleetID(params string, shards int) string {
	return params + "\nshards=" + strconv.Itoa(shards)
}

// FleetShards is the number of shards of a FleetID (0 when it names none).
func FleetShards(id string) int {
	i := strings.LastIndex(id, "\nshards=")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(id[i+len("\nshards="):])
	return n
}

// ShardsLoaded lists, of the n shards of a --shard load, those whose
// journal says they loaded their part, and those that did not.
func ShardsLoaded(meta map[string]string, n int) (loaded, missing []int) {
	for i := range n {
		if meta[JournalPrefix(i, n)+JournalState] == JournalDone {
			loaded = append(loaded, i)
		} else {
			missing = append(missing, i)
		}
	}
	return loaded, missing
}

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
