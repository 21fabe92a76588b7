package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/linkbench/linkbench/internal/report"
)

// readSides reads the sides of `report DIR...`: a directory that is a
// results bundle is a side of one run; any other directory is a side of
// the bundles directly under it (the runs of one configuration, to
// measure how much runs differ): its request-phase bundles, or its load
// bundles when it has none (`run -l -r` writes both).
func readSides(dirs []string) ([]report.Side, error) {
	var sides []report.Side
	for _, d := range dirs {
		name := filepath.Base(filepath.Clean(d))
		if _, err := os.Stat(filepath.Join(d, "summary.json")); err == nil {
			r, err := report.ReadBundle(d)
			if err != nil {
				return nil, err
			}
			sides = append(sides, report.Side{Name: name, Runs: []*report.Results{r}, RunNames: []string{name}})
			continue
		}
		found, _ := filepath.Glob(filepath.Join(d, "*", "summary.json"))
		sort.Strings(found)
		byPhase := map[string]*report.Side{}
		for _, f := range found {
			b := filepath.Dir(f)
			if filepath.Base(b)[0] == '.' {
				continue // a bundle still being written
			}
			r, err := report.ReadBundle(b)
			if err != nil {
				return nil, err
			}
			side := byPhase[r.Phase]
			if side == nil {
				side = &report.Side{Name: name}
				byPhase[r.Phase] = side
			}
			side.Runs, side.RunNames = append(side.Runs, r), append(side.RunNames, name+"/"+filepath.Base(b))
		}
		side := byPhase["request"]
		if side == nil {
			side = byPhase["load"]
		}
		if side == nil {
			return nil, fmt.Errorf("%s is not a results bundle (no summary.json) and holds no load or request bundles; name a bundle, or a directory of the bundles of one side", d)
		}
		sides = append(sides, *side)
	}
	if len(sides) == 1 && len(sides[0].Runs) > 1 {
		return nil, fmt.Errorf("%s holds %d bundles: name one to rebuild its report, or name another side to compare them with", dirs[0], len(sides[0].Runs))
	}
	return sides, nil
}
