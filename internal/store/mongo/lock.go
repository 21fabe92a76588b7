package mongo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/linkbench/linkbench/internal/store"
)

// lockLease is how long a lock document lives without its process
// renewing it (every lockLease/3): a process that dies frees its lock
// after at most this long.
const lockLease = 30 * time.Second

// lockColl is the collection of the lock documents.
const lockColl = "linkbench_locks"

// Lock implements store.Locker with a lock document per process in the
// collection linkbench_locks: the process inserts its own (group run or
// load, exclusive or not, its holder string, an expiry it renews), then
// looks for a live one that conflicts; finding one, it removes its own and
// refuses. Of two that start together at least one sees the other.
func (s *Store) Lock(ctx context.Context, mode store.LockMode, holder string) (func(), error) {
	coll := s.db.Collection(lockColl)
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
	group := "run"
	if mode != store.LockRun {
		group = "load"
	}
	doc := bson.D{{Key: "_id", Value: id}, {Key: "group", Value: group}, {Key: "exclusive", Value: mode == store.LockLoad},
		{Key: "holder", Value: holder}, {Key: "expires", Value: time.Now().Add(lockLease)}}
	// The documents of processes that died are dead weight.
	coll.DeleteMany(ctx, bson.D{{Key: "expires", Value: bson.D{{Key: "$lt", Value: time.Now().Add(-lockLease)}}}})
	if _, err := coll.InsertOne(ctx, doc); err != nil {
		return nil, classify(err)
	}
	var conflict bson.D
	switch mode {
	case store.LockRun:
		conflict = bson.D{{Key: "group", Value: "load"}}
	case store.LockShardLoad:
		conflict = bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "group", Value: "run"}}, bson.D{{Key: "exclusive", Value: true}}}}}
	}
	filter := append(bson.D{{Key: "_id", Value: bson.D{{Key: "$ne", Value: id}}}, {Key: "expires", Value: bson.D{{Key: "$gt", Value: time.Now()}}}}, conflict...)
	var other struct {
		Holder string `bson:"holder"`
	}
	err := coll.FindOne(ctx, filter).Decode(&other)
	switch {
	case err == nil:
		coll.DeleteOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: id}})
		return nil, &store.LockedError{Where: fmt.Sprintf("database %s at %s", s.dbName, s.addr), Holder: other.Holder, Mode: mode}
	case !errors.Is(err, mongo.ErrNoDocuments):
		coll.DeleteOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: id}})
		return nil, classify(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lockLease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				uctx, cancel := context.WithTimeout(context.Background(), lockLease/3)
				coll.UpdateOne(uctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: time.Now().Add(lockLease)}}}})
				cancel()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			coll.DeleteOne(rctx, bson.D{{Key: "_id", Value: id}})
		})
	}, nil
}
