package mongo

import (
	"context"
	"errors"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/graph"
)

// nodeIDs allocates the ids of new nodes in the process, as the
// reference's store does: the first ADD_NODE of the process asks for the
// largest node id (a find sorted by _id descending, limit 1), the next
// ids are counted from it. A load of the nodes in this process sets it
// instead, as the reference's node loader does.
type nodeIDs struct {
	mu   sync.Mutex
	next int64 // 0: not known yet
}

// take returns the next id, asking the server for the largest one first
// when it is not known.
func (a *nodeIDs) take(ctx context.Context, nodes *mongo.Collection) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next == 0 {
		var d struct {
			ID int64 `bson:"_id"`
		}
		o := options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: -1}})
		err := nodes.FindOne(ctx, bson.D{}, o).Decode(&d)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return 0, err
		}
		// An empty collection starts at 1, not the reference's 0: node
		// ids are positive.
		a.next = max(d.ID+1, 1)
	}
	id := a.next
	a.next++
	return id, nil
}

// atLeast moves the next id to at least id.
func (a *nodeIDs) atLeast(id int64) {
	a.mu.Lock()
	a.next = max(a.next, id)
	a.mu.Unlock()
}

// forget makes the next take ask the server again.
func (a *nodeIDs) forget() {
	a.mu.Lock()
	a.next = 0
	a.mu.Unlock()
}

var unordered = options.InsertMany().SetOrdered(false)

// AddNode implements store.Store: the reference's bulk insert of one
// node (unordered) in a transaction. A duplicate id means another process
// adds nodes to the same database (the reference's store then fails the
// request); the largest id is asked for again and the insert repeated.
func (s *Store) AddNode(ctx context.Context, n *graph.Node) (int64, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	for attempt := 0; ; attempt++ {
		id, err := s.ids.take(ctx, s.nodes)
		if err != nil {
			return 0, s.done(ctx, classify(err))
		}
		err = s.inTxn(ctx, func(ctx context.Context) error {
			_, err := s.nodes.InsertMany(ctx, []any{nodeInsert(id, n)}, unordered)
			return err
		})
		if err != nil && mongo.IsDuplicateKeyError(err) && attempt < 3 {
			s.ids.forget()
			continue
		}
		return id, s.done(ctx, err)
	}
}

// GetNode implements store.Store: a find by _id; a node of another type
// is not found.
func (s *Store) GetNode(ctx context.Context, nodeType int32, id int64) (graph.Node, bool, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	var d nodeDoc
	err := s.nodes.FindOne(ctx, byID(id)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return graph.Node{}, false, nil
	}
	if err != nil {
		return graph.Node{}, false, s.done(ctx, classify(err))
	}
	if d.Type != nodeType {
		return graph.Node{}, false, nil
	}
	return graph.Node{ID: id, Type: d.Type, Version: d.Version, Time: d.Time, Data: d.Data}, true, nil
}

func nodeFilter(nodeType int32, id int64) bson.D {
	return bson.D{{Key: "_id", Value: id}, {Key: "type", Value: nodeType}}
}

// UpdateNode implements store.Store: one update where id and type match.
// The reference opens a transaction around it but sends the update outside
// it (no session), so the server sees the update alone; so does it here.
func (s *Store) UpdateNode(ctx context.Context, n *graph.Node) (bool, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	r, err := s.nodes.UpdateOne(ctx, nodeFilter(n.Type, n.ID), bson.D{{Key: "$set", Value: bson.D{
		{Key: "version", Value: n.Version}, {Key: "time", Value: n.Time}, {Key: "data", Value: nonNil(n.Data)}}}})
	if err != nil {
		return false, s.done(ctx, classify(err))
	}
	return r.MatchedCount > 0, nil
}

// DeleteNode implements store.Store: one delete where id and type match,
// outside any transaction as UpdateNode.
func (s *Store) DeleteNode(ctx context.Context, nodeType int32, id int64) (bool, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	r, err := s.nodes.DeleteOne(ctx, nodeFilter(nodeType, id))
	if err != nil {
		return false, s.done(ctx, classify(err))
	}
	return r.DeletedCount > 0, nil
}
