package main

// The stores register themselves with the registry when imported.
import (
	_ "github.com/linkbench/linkbench/internal/store/memory"
	_ "github.com/linkbench/linkbench/internal/store/mongo"
	_ "github.com/linkbench/linkbench/internal/store/mysql"
	_ "github.com/linkbench/linkbench/internal/store/pebble"
	_ "github.com/linkbench/linkbench/internal/store/postgres"
	_ "github.com/linkbench/linkbench/internal/store/sqlite"
)
