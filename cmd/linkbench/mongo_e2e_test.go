package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	mongoopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// mongoURL is the throwaway FerretDB of scripts/ferretdb.sh.
func mongoURL(t *testing.T) *url.URL {
	t.Helper()
	raw := storetest.ServerURL(t, storetest.MongoEnv)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestMongoLoadRunCheck drives the whole CLI against the MongoDB-protocol
// server: load, a write-heavy concurrent run without multi-document
// transactions, and check, which must find every count equal to its
// visible links.
func TestMongoLoadRunCheck(t *testing.T) {
	u := mongoURL(t)
	dir := t.TempDir()
	dbid := fmt.Sprintf("lbe2e_%d", os.Getpid())
	t.Cleanup(func() { dropMongoDB(t, u, dbid) })
	common := []string{"-c", repoConfig(t, "LinkConfigMongoDb2.properties"), "-D", "url=" + u.String(), "-D", "dbid=" + dbid,
		"-D", "nlinks_func=const", "-D", "nlinks_default=5", "-D", "maxid1=501", "-D", "loaders=2", "-D", "progressfreq=60"}
	out, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate"}, common...)...)
	if code != 0 || !strings.Contains(out, "LOAD PHASE COMPLETED") {
		t.Fatalf("load: exit %d\n%s\n%s", code, out, errOut)
	}
	writeHeavy := []string{"-D", "addlink=30", "-D", "deletelink=20", "-D", "updatelink=30", "-D", "getlinklist=10", "-D", "countlink=5",
		"-D", "getlink=5", "-D", "getnode=0", "-D", "addnode=0", "-D", "updatenode=0", "-D", "deletenode=0"}
	run := append([]string{"run", "-D", "requesters=4", "-D", "requests=60", "-D", "maxtime=60", "-D", "warmup_time=0", "-D", "mongo_transactions=off"}, common...)
	out, errOut, code = runCLI(t, dir, append(run, writeHeavy...)...)
	if code != 0 || !strings.Contains(out, "REQUEST PHASE COMPLETED") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out+errOut, "mongo_transactions") {
		t.Errorf("the results do not name the consistency mode in force:\n%s\n%s", out, errOut)
	}
	out, errOut, code = runCLI(t, dir, append([]string{"check"}, common...)...)
	if code != 0 || !strings.Contains(out, "check passed") {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestMongoConnectionErrorsExitOne: each way of not reaching a usable
// server is one clear line and exit 1.
func TestMongoConnectionErrorsExitOne(t *testing.T) {
	u := mongoURL(t)
	dir := t.TempDir()
	wrongPW := *u
	wrongPW.User = url.UserPassword(u.User.Username(), "wrong-secret")
	cfg := repoConfig(t, "LinkConfigMongoDb2.properties")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unreachable", []string{"-D", "url=mongodb://127.0.0.1:1/"}, "is the server running"},
		{"bad credentials", []string{"-D", "url=" + wrongPW.String()}, "authentication failed"},
		{"transactions on", []string{"-D", "url=" + u.String(), "-D", "mongo_transactions=on"}, "no multi-document transactions"},
	} {
		args := append([]string{"load", "-c", cfg, "-D", "dbid=lb_never_created", "-D", "maxid1=101"}, c.args...)
		_, errOut, code := runCLI(t, dir, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		last := lines[len(lines)-1]
		if code != 1 || !strings.Contains(last, c.want) || strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "wrong-secret") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line with %q", c.name, code, errOut, c.want)
		}
	}
}

func dropMongoDB(t *testing.T, u *url.URL, name string) {
	ctx := context.Background()
	c, err := mongo.Connect(mongoopts.Client().ApplyURI(u.String()))
	if err != nil {
		t.Log(err)
		return
	}
	defer c.Disconnect(ctx)
	if err := c.Database(name).Drop(ctx); err != nil {
		t.Log(err)
	}
}
