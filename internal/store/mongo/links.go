package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/graph"
)

// A link write sends what the reference's store sends, in one transaction
// (inTxn):
//
//	ADD_LINK, UPDATE_LINK: findAndModify of the link, upsert, returning the
//	  visibility it had (fields {visibility: 1, _id: 0}); then, when the
//	  link was absent and is visible or its visibility changed, an upsert of
//	  the count document: $inc count ±1 and version, $set time = now.
//	DELETE_LINK: findAndModify of the link, $set visibility 0 (or remove,
//	  expunge), returning its visibility; when it was visible, a
//	  findAndModify upsert of the count document: $inc count -1 and
//	  version, $set time. A link not found still commits.
//
// The count document may go below zero where the stored count disagreed
// (the reference's does); COUNT_LINK reports 0 then.

// linkUpdate is the reference's update of an upserted link.
func linkUpdate(l *graph.Link, id bson.Binary) bson.D {
	return bson.D{
		{Key: "$setOnInsert", Value: bson.D{{Key: "_id", Value: id}, {Key: "id1", Value: l.ID1}, {Key: "link_type", Value: l.LinkType}, {Key: "id2", Value: l.ID2}}},
		{Key: "$set", Value: bson.D{{Key: "visibility", Value: int32(l.Visibility)}, {Key: "version", Value: l.Version}, {Key: "time", Value: l.Time}, {Key: "data", Value: nonNil(l.Data)}}},
	}
}

// countUpdate is the reference's update of a count document; version is
// the increment of its version, whose type differs between the link write
// (int32) and the delete (int64) in the reference.
func countUpdate(id1, linkType int64, id bson.Binary, delta int64, version any) bson.D {
	return bson.D{
		{Key: "$setOnInsert", Value: bson.D{{Key: "_id", Value: id}, {Key: "id", Value: id1}, {Key: "link_type", Value: linkType}}},
		{Key: "$inc", Value: bson.D{{Key: "count", Value: delta}, {Key: "version", Value: version}}},
		{Key: "$set", Value: bson.D{{Key: "time", Value: time.Now().UnixMilli()}}},
	}
}

var (
	// visibilityOnly is the reference's projection of the document a link
	// write finds; seen adds what tells an unchanged link from an updated
	// one, for the writes whose outcome is asked for (not the request
	// phase's, store.BlindLinkWriter).
	visibilityOnly = bson.D{{Key: "visibility", Value: 1}, {Key: "_id", Value: 0}}
	seen           = bson.D{{Key: "visibility", Value: 1}, {Key: "version", Value: 1}, {Key: "time", Value: 1}, {Key: "data", Value: 1}, {Key: "_id", Value: 0}}
	upsertOne      = options.UpdateOne().SetUpsert(true)
)

// fields is the findAndModify projection p, or none on a server that does
// not implement one (FerretDB v1): the whole document comes back.
func (s *Store) fields(p bson.D) bson.D {
	if s.ferret {
		return nil
	}
	return p
}

// writeLink is ADD_LINK and UPDATE_LINK (the reference runs the same
// commands for both); outcome asks for the result.
func (s *Store) writeLink(ctx context.Context, l *graph.Link, outcome bool) (graph.WriteResult, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	if s.serial != nil {
		defer s.serial.lock(l.ID1, l.LinkType).Unlock()
	}
	proj := visibilityOnly
	if outcome {
		proj = seen
	}
	var res graph.WriteResult
	err := s.inTxn(ctx, func(ctx context.Context) error {
		id := linkID(l.ID1, l.LinkType, l.ID2)
		o := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)
		if p := s.fields(proj); p != nil {
			o.SetProjection(p)
		}
		var prev linkDoc
		err := s.links.FindOneAndUpdate(ctx, byID(id), linkUpdate(l, id), o).Decode(&prev)
		found := err == nil
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return err
		}
		var delta int64
		res, delta = graph.WriteOutcome(found, prev.link(), l)
		if !outcome && found {
			res = graph.Updated
		}
		// The reference writes the count when the link was absent and is
		// visible, or its visibility changed: when delta is not 0 (an
		// absent link written hidden leaves the count alone).
		if delta != 0 {
			cid := countID(l.ID1, l.LinkType)
			if _, err := s.counts.UpdateOne(ctx, byID(cid), countUpdate(l.ID1, l.LinkType, cid, delta, int32(1)), upsertOne); err != nil {
				return err
			}
		}
		return s.checkCountOf(ctx, l.ID1, l.LinkType)
	})
	return res, s.done(ctx, err)
}

// deleteLink is DELETE_LINK.
func (s *Store) deleteLink(ctx context.Context, id1, linkType, id2 int64, expunge bool) (bool, error) {
	ctx, end := noDeadline(ctx)
	defer end()
	if s.serial != nil {
		defer s.serial.lock(id1, linkType).Unlock()
	}
	var existed bool
	err := s.inTxn(ctx, func(ctx context.Context) error {
		key := byID(linkID(id1, linkType, id2))
		var prev linkDoc
		var err error
		if expunge {
			o := options.FindOneAndDelete()
			if p := s.fields(visibilityOnly); p != nil {
				o.SetProjection(p)
			}
			err = s.links.FindOneAndDelete(ctx, key, o).Decode(&prev)
		} else {
			o := options.FindOneAndUpdate().SetReturnDocument(options.Before)
			if p := s.fields(visibilityOnly); p != nil {
				o.SetProjection(p)
			}
			err = s.links.FindOneAndUpdate(ctx, key, bson.D{{Key: "$set", Value: bson.D{{Key: "visibility", Value: int32(graph.VisibilityHidden)}}}}, o).Decode(&prev)
		}
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return err
		}
		existed = true
		if prev.Visibility != visible {
			return nil
		}
		cid := countID(id1, linkType)
		var c countDoc
		err = s.counts.FindOneAndUpdate(ctx, byID(cid), countUpdate(id1, linkType, cid, -1, int64(1)), options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)).Decode(&c)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			// Created at -1: the stored count had no document.
		case err != nil:
			return err
		case c.Count < -1:
			// The reference's sanity check of the count it found.
			return fmt.Errorf("count document of (%d, %d) was %d before this delete", id1, linkType, c.Count)
		}
		return s.checkCountOf(ctx, id1, linkType)
	})
	return existed, s.done(ctx, err)
}

// checkCountOf is check_count, the reference's testCount: the visible
// links of (id1, link_type) counted by one aggregation, the count
// documents summed by another, and an error when they differ.
func (s *Store) checkCountOf(ctx context.Context, id1, linkType int64) error {
	if !s.checkCount {
		return nil
	}
	sum := func(c *mongo.Collection, match bson.D, group bson.D) (int64, error) {
		cur, err := c.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: match}}, bson.D{{Key: "$group", Value: group}}})
		if err != nil {
			return 0, err
		}
		defer cur.Close(ctx)
		var r struct {
			Count int64 `bson:"count"`
			Total int64 `bson:"total"`
		}
		if cur.Next(ctx) {
			if err := cur.Decode(&r); err != nil {
				return 0, err
			}
		}
		return r.Count + r.Total, cur.Err()
	}
	n, err := sum(s.links, bson.D{{Key: "id1", Value: id1}, {Key: "link_type", Value: linkType}, {Key: "visibility", Value: visible}},
		bson.D{{Key: "_id", Value: nil}, {Key: "count", Value: bson.D{{Key: "$sum", Value: int64(1)}}}})
	if err != nil {
		return err
	}
	total, err := sum(s.counts, bson.D{{Key: "id", Value: id1}, {Key: "link_type", Value: linkType}},
		bson.D{{Key: "_id", Value: nil}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$count"}}}, {Key: "instances", Value: bson.D{{Key: "$sum", Value: int64(1)}}}})
	if err != nil {
		return err
	}
	if n != total {
		return fmt.Errorf("check_count: %d visible links of (%d, %d) but the count documents say %d", n, id1, linkType, total)
	}
	return nil
}

// AddLink implements store.Store.
func (s *Store) AddLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.writeLink(ctx, l, true)
}

// UpdateLink implements store.Store: the same commands as AddLink, as in
// the reference.
func (s *Store) UpdateLink(ctx context.Context, l *graph.Link) (graph.WriteResult, error) {
	return s.writeLink(ctx, l, true)
}

// DeleteLink implements store.Store.
func (s *Store) DeleteLink(ctx context.Context, id1, linkType, id2 int64, expunge bool) (bool, error) {
	return s.deleteLink(ctx, id1, linkType, id2, expunge)
}

// AddLinkBlind implements store.BlindLinkWriter: the reference's commands
// exactly (the found link's visibility only).
func (s *Store) AddLinkBlind(ctx context.Context, l *graph.Link) error {
	_, err := s.writeLink(ctx, l, false)
	return err
}

// UpdateLinkBlind implements store.BlindLinkWriter.
func (s *Store) UpdateLinkBlind(ctx context.Context, l *graph.Link) error {
	_, err := s.writeLink(ctx, l, false)
	return err
}

// DeleteLinkBlind implements store.BlindLinkWriter.
func (s *Store) DeleteLinkBlind(ctx context.Context, id1, linkType, id2 int64, expunge bool) error {
	_, err := s.deleteLink(ctx, id1, linkType, id2, expunge)
	return err
}
