package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

// listIndexKeys is the index the reference's instructions create on the
// link collection (README, "Running a Benchmark with MongoDB"): it covers
// GET_LINKS_LIST (equality on id1, link_type, visibility; range and order
// on time, ties by id2; every field the list returns), so the list is
// read from the index alone. Its name is the one MongoDB gives it.
var listIndexKeys = bson.D{
	{Key: "id1", Value: 1}, {Key: "link_type", Value: 1}, {Key: "visibility", Value: 1}, {Key: "time", Value: 1},
	{Key: "id2", Value: 1}, {Key: "version", Value: 1}, {Key: "data", Value: 1},
}

const listIndex = "id1_1_link_type_1_visibility_1_time_1_id2_1_version_1_data_1"

// Init implements store.Initializer: the collections and the list index
// (unless one that serves the lists is there). With drop, the collections
// are dropped first.
func (s *Store) Init(ctx context.Context, drop bool) error {
	cols := []*mongo.Collection{s.links, s.counts, s.nodes, s.meta}
	if drop {
		for _, c := range cols {
			if err := c.Drop(ctx); err != nil {
				return fmt.Errorf("drop %s: %w", c.Name(), classify(err))
			}
		}
		s.ids.forget()
	}
	have, err := s.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return classify(err)
	}
	for _, c := range cols {
		if slices.Contains(have, c.Name()) {
			continue
		}
		if err := s.db.CreateCollection(ctx, c.Name()); err != nil && !isNamespaceExists(err) {
			return fmt.Errorf("create collection %s: %w", c.Name(), classify(err))
		}
	}
	name, err := s.listIndexName(ctx)
	if err != nil {
		return err
	}
	if name == "" {
		if _, err := s.links.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: listIndexKeys}); err != nil {
			return fmt.Errorf("create index %s on %s: %w", listIndex, s.links.Name(), classify(err))
		}
	}
	return s.CheckSchema(ctx)
}

func isNamespaceExists(err error) bool {
	var ce mongo.CommandError
	return errors.As(err, &ce) && ce.Code == 48
}

// listIndexName is the name of an index of the link collection that serves
// the lists ("" if none): its keys start with id1 and link_type, then
// visibility and time in either order (the reference's instructions, its
// mongo-setup.js, and earlier linkbench versions made such indexes).
func (s *Store) listIndexName(ctx context.Context) (string, error) {
	specs, err := s.links.Indexes().ListSpecifications(ctx)
	if err != nil {
		return "", classify(err)
	}
	for _, sp := range specs {
		var keys bson.D
		if err := bson.Unmarshal(sp.KeysDocument, &keys); err != nil || len(keys) < 4 {
			continue
		}
		names := []string{keys[0].Key, keys[1].Key, keys[2].Key, keys[3].Key}
		if names[0] == "id1" && names[1] == "link_type" && (names[2] == "visibility" && names[3] == "time" || names[2] == "time" && names[3] == "visibility") {
			return sp.Name, nil
		}
	}
	return "", nil
}

// CheckSchema reports a missing collection or list index, or documents of
// another layout, naming the server and the fix.
func (s *Store) CheckSchema(ctx context.Context) error {
	have, err := s.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return classify(err)
	}
	for _, c := range []*mongo.Collection{s.links, s.counts, s.nodes} {
		if !slices.Contains(have, c.Name()) {
			return graph.Schema(fmt.Errorf("collection %s is missing in database %s at %s: the store holds no graph; `linkbench load` creates it and loads one", c.Name(), s.dbName, s.addr))
		}
	}
	for _, c := range []struct {
		coll *mongo.Collection
		id   bson.Type
	}{{s.links, bson.TypeBinary}, {s.counts, bson.TypeBinary}, {s.nodes, bson.TypeInt64}} {
		raw, err := c.coll.FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return classify(err)
		}
		if id := raw.Lookup("_id"); id.Type != c.id {
			return layoutError(c.coll.Name(), s.dbName, s.addr, id)
		}
	}
	name, err := s.listIndexName(ctx)
	if err != nil || name != "" {
		return err
	}
	return graph.Schema(fmt.Errorf("collection %s in database %s at %s has no index for the lists (%s); run `linkbench init` to create it", s.links.Name(), s.dbName, s.addr, listIndex))
}

// Reset implements store.Resetter: removes every document, keeping the
// collections and indexes.
func (s *Store) Reset(ctx context.Context) error {
	for _, c := range []*mongo.Collection{s.links, s.counts, s.nodes, s.meta} {
		if _, err := c.DeleteMany(ctx, bson.D{}); err != nil {
			return fmt.Errorf("empty %s: %w", c.Name(), classify(err))
		}
	}
	s.ids.forget()
	return nil
}

// IsEmpty implements store.EmptyChecker.
func (s *Store) IsEmpty(ctx context.Context) (bool, error) {
	for _, c := range []*mongo.Collection{s.links, s.counts, s.nodes} {
		err := c.FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return false, classify(err)
		}
	}
	return true, nil
}

// metaKey is the meta document that holds the load's record.
const metaKey = "load"

type metaPair struct {
	K string `bson:"k"`
	V string `bson:"v"`
}

// GetMeta implements store.MetaStore.
func (s *Store) GetMeta(ctx context.Context) (map[string]string, error) {
	var d struct {
		Pairs []metaPair `bson:"pairs"`
	}
	m := map[string]string{}
	err := s.meta.FindOne(ctx, byID(metaKey)).Decode(&d)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return nil, classify(err)
	}
	for _, p := range d.Pairs {
		m[p.K] = p.V
	}
	cur, err := s.meta.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: keyDocPrefix}, {Key: "$lt", Value: prefixEnd(keyDocPrefix)}}}})
	if err != nil {
		return nil, classify(err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var kd struct {
			ID string `bson:"_id"`
			V  string `bson:"v"`
		}
		if err := cur.Decode(&kd); err != nil {
			return nil, err
		}
		m[strings.TrimPrefix(kd.ID, keyDocPrefix)] = kd.V
	}
	return m, classify(cur.Err())
}

// keyDocPrefix starts the _id of the meta documents that hold one key
// each: the load journal, which many loaders update at once.
const keyDocPrefix = "key:"

// prefixEnd is the smallest string above every string starting with p
// (p's last byte is never 0xff here).
func prefixEnd(p string) string {
	b := []byte(p)
	b[len(b)-1]++
	return string(b)
}

// UpdateMeta implements store.Journaler: each key is its own document, so
// concurrent loaders never rewrite each other's entries.
func (s *Store) UpdateMeta(ctx context.Context, set map[string]string, deletePrefix string) error {
	if deletePrefix != "" {
		lo := keyDocPrefix + deletePrefix
		if _, err := s.meta.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: lo}, {Key: "$lt", Value: prefixEnd(lo)}}}}); err != nil {
			return classify(err)
		}
	}
	for k, v := range set {
		filter, update := byID(keyDocPrefix+k), bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: v}}}}
		_, err := s.meta.UpdateOne(ctx, filter, update, upsertOne)
		if mongo.IsDuplicateKeyError(err) {
			// A concurrent upsert of the same new key inserted it first
			// (both missed it): the document exists now, so this one
			// updates it.
			_, err = s.meta.UpdateOne(ctx, filter, update, upsertOne)
		}
		if err != nil {
			return classify(err)
		}
	}
	return nil
}

// ClaimMeta implements store.Journaler: an insert of the key's document,
// which fails on a key already claimed (the _id is unique), then a read.
func (s *Store) ClaimMeta(ctx context.Context, key, value string) (string, error) {
	_, err := s.meta.InsertOne(ctx, bson.D{{Key: "_id", Value: keyDocPrefix + key}, {Key: "v", Value: value}})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return "", classify(err)
	}
	var kd struct {
		V string `bson:"v"`
	}
	if err := s.meta.FindOne(ctx, byID(keyDocPrefix+key)).Decode(&kd); err != nil {
		return "", classify(err)
	}
	return kd.V, nil
}

// PutMeta implements store.MetaStore. The pairs are an array, not a
// subdocument, so that any key is allowed.
func (s *Store) PutMeta(ctx context.Context, meta map[string]string) error {
	pairs := make([]metaPair, 0, len(meta))
	for k, v := range meta {
		pairs = append(pairs, metaPair{k, v})
	}
	slices.SortFunc(pairs, func(a, b metaPair) int {
		if a.K < b.K {
			return -1
		}
		if a.K > b.K {
			return 1
		}
		return 0
	})
	if _, err := s.meta.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: keyDocPrefix}, {Key: "$lt", Value: prefixEnd(keyDocPrefix)}}}}); err != nil {
		return classify(err)
	}
	_, err := s.meta.ReplaceOne(ctx, byID(metaKey), bson.D{{Key: "_id", Value: metaKey}, {Key: "pairs", Value: pairs}}, options.Replace().SetUpsert(true))
	return classify(err)
}

// ScanCounts implements store.Scanner, in _id order, which is (id1,
// link_type) order: the _id is both, big-endian.
func (s *Store) ScanCounts(ctx context.Context, fn func(c graph.Count) error) error {
	cur, err := s.counts.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetAllowDiskUse(true))
	if err != nil {
		return classify(err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var c countDoc
		if err := cur.Decode(&c); err != nil {
			return err
		}
		if err := fn(graph.Count{ID1: c.ID1, LinkType: c.LinkType, Count: c.Count, Time: c.Time, Version: c.Version}); err != nil {
			return err
		}
	}
	return classify(cur.Err())
}

// ScanVisibleLinkCounts implements store.Scanner: the visible links in
// (id1, link_type) order, which the list index provides, counted here.
func (s *Store) ScanVisibleLinkCounts(ctx context.Context, fn func(id1, linkType, visible int64) error) error {
	o := options.Find().
		SetSort(bson.D{{Key: "id1", Value: 1}, {Key: "link_type", Value: 1}}).
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "id1", Value: 1}, {Key: "link_type", Value: 1}}).
		SetAllowDiskUse(true)
	cur, err := s.links.Find(ctx, bson.D{{Key: "visibility", Value: visible}}, o)
	if err != nil {
		return classify(err)
	}
	defer cur.Close(ctx)
	var id1, lt, n int64
	for cur.Next(ctx) {
		var d struct {
			ID1      int64 `bson:"id1"`
			LinkType int64 `bson:"link_type"`
		}
		if err := cur.Decode(&d); err != nil {
			return err
		}
		if n > 0 && (d.ID1 != id1 || d.LinkType != lt) {
			if err := fn(id1, lt, n); err != nil {
				return err
			}
			n = 0
		}
		id1, lt = d.ID1, d.LinkType
		n++
	}
	if err := cur.Err(); err != nil {
		return classify(err)
	}
	if n > 0 {
		return fn(id1, lt, n)
	}
	return nil
}

// NodeIDRange implements store.Scanner.
func (s *Store) NodeIDRange(ctx context.Context) (lo, hi int64, ok bool, err error) {
	end := func(dir int) (int64, error) {
		var d struct {
			ID int64 `bson:"_id"`
		}
		o := options.FindOne().SetSort(bson.D{{Key: "_id", Value: dir}}).SetProjection(bson.D{{Key: "_id", Value: 1}})
		return d.ID, s.nodes.FindOne(ctx, bson.D{}, o).Decode(&d)
	}
	lo, err = end(1)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, classify(err)
	}
	if hi, err = end(-1); err != nil {
		return 0, 0, false, classify(err)
	}
	return lo, hi, true, nil
}

// SizeOnDisk implements store.Sizer: storage and index size of the database.
func (s *Store) SizeOnDisk(ctx context.Context) (int64, error) {
	var st bson.M
	if err := s.db.RunCommand(ctx, bson.D{{Key: "dbStats", Value: 1}}).Decode(&st); err != nil {
		return 0, classify(err)
	}
	var total int64
	for _, k := range []string{"storageSize", "indexSize"} {
		switch v := st[k].(type) {
		case int32:
			total += int64(v)
		case int64:
			total += v
		case float64:
			total += int64(v)
		}
	}
	return total, nil
}

// BeginLoad implements store.BulkLoader.
func (s *Store) BeginLoad(ctx context.Context, _ store.LoadInfo) error { return nil }

// insert writes one batch as the reference's bulk loads do: one unordered
// insert of plain documents, in a transaction of its own when the store
// has them. A replayed unit of a resumed load (store.SkipExisting) skips
// the documents already there: without a transaction, as a transaction
// ends at the first duplicate.
func (s *Store) insert(ctx context.Context, c *mongo.Collection, docs []any) error {
	ctx, end := noDeadline(ctx)
	defer end()
	if len(docs) == 0 {
		return nil
	}
	err := s.inTxn(ctx, func(ctx context.Context) error {
		_, err := c.InsertMany(ctx, docs, unordered)
		return err
	})
	if err != nil && store.SkipExisting(ctx) && onlyDuplicates(err) {
		if s.txn {
			_, err = c.InsertMany(ctx, docs, unordered)
		}
		if err == nil || onlyDuplicates(err) {
			return nil // the documents already written are identical
		}
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", c.Name(), err)
	}
	return nil
}

// onlyDuplicates reports whether every failed write of an unordered
// insert failed on a duplicate key (the others were written).
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != codeDuplicateKey {
			return false
		}
	}
	return true
}

// LoadNodes implements store.BulkLoader: the nodes under their own ids,
// which are the ids the reference's node loader gives them.
func (s *Store) LoadNodes(ctx context.Context, nodes []graph.Node) error {
	docs := make([]any, len(nodes))
	for i := range nodes {
		docs[i] = nodeInsert(nodes[i].ID, &nodes[i])
	}
	if err := s.insert(ctx, s.nodes, docs); err != nil {
		return err
	}
	s.loadedNodes.Store(true)
	return nil
}

// LoadLinks implements store.BulkLoader.
func (s *Store) LoadLinks(ctx context.Context, links []graph.Link) error {
	docs := make([]any, len(links))
	for i := range links {
		docs[i] = linkInsert(&links[i])
	}
	return s.insert(ctx, s.links, docs)
}

// LoadCounts implements store.BulkLoader.
func (s *Store) LoadCounts(ctx context.Context, counts []graph.Count) error {
	docs := make([]any, len(counts))
	for i := range counts {
		docs[i] = countInsert(&counts[i])
	}
	return s.insert(ctx, s.counts, docs)
}

// EndLoad implements store.BulkLoader: when this process loaded nodes,
// new nodes get ids from MaxID1 on, as the reference's node loader leaves
// its id counter (nothing is sent, so a shard's partial load does the
// same); otherwise the first ADD_NODE asks the server for the largest id.
func (s *Store) EndLoad(ctx context.Context, info store.LoadInfo) error {
	if s.loadedNodes.Load() {
		s.ids.atLeast(info.MaxID1)
	}
	return nil
}
