package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbench/linkbench/internal/store/storetest"
)

// mysqlExec runs statements on the MariaDB test server.
func mysqlExec(t *testing.T, db string, stmts ...string) {
	t.Helper()
	mysqlQuery(t, db, func(h *sql.DB) {
		for _, s := range stmts {
			if _, err := h.ExecContext(context.Background(), s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	})
}

// TestWrongColumnTypesRefused: tables made beforehand with a column type
// that cannot hold its values are refused before anything is loaded, with
// one line naming the column, its type and the expected one. Before, a
// MariaDB linktable with time int loaded with exit 0 and every link time
// clamped to 2147483647, and a PostgreSQL data text column failed the
// COPY with an encoding error and an impossible --resume hint.
// Reliability(writer): tables made beforehand with a type that cannot hold the values (MariaDB `time int`, PostgreSQL `data text`, SQLite `time REAL`) | refused before loading, naming the column, its type and the expected one
func TestWrongColumnTypesRefused(t *testing.T) {
	graph := []string{"-D", "nlinks_func=const", "-D", "nlinks_default=2", "-D", "maxid1=501", "--no-results"}
	t.Run("mariadb time int", func(t *testing.T) {
		db := fmt.Sprintf("lbtypes%d", os.Getpid())
		mysqlExec(t, "", "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db)
		t.Cleanup(func() { mysqlExec(t, "", "DROP DATABASE IF EXISTS "+db) })
		mysqlExec(t, db, `CREATE TABLE linktable (id1 bigint unsigned NOT NULL, id2 bigint unsigned NOT NULL, link_type bigint unsigned NOT NULL,
			visibility tinyint NOT NULL, data varchar(255) NOT NULL, time int NOT NULL, version int unsigned NOT NULL,
			PRIMARY KEY (link_type, id1, id2)) DEFAULT CHARSET=latin1`)
		url := strings.TrimSuffix(storetest.ServerURL(t, storetest.MySQLEnv), "/linkdb0") + "/" + db
		_, errOut, code := runCLI(t, t.TempDir(), append([]string{"load", "-c", repoConfig(t, "LinkConfigMysql.properties"), "-D", "url=" + url}, graph...)...)
		if code != 1 || !strings.Contains(errOut, "column time is int(11), which cannot hold its values (milliseconds since 1970); expected bigint") || strings.Contains(errOut, "--resume") {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
	})
	t.Run("postgres data text", func(t *testing.T) {
		url := storetest.ServerURL(t, storetest.PostgresEnv)
		schema := fmt.Sprintf("lbtypes%d", os.Getpid())
		pgExec(t, url, "DROP SCHEMA IF EXISTS "+schema+" CASCADE", "CREATE SCHEMA "+schema,
			`CREATE TABLE `+schema+`.linktable (id1 bigint NOT NULL, id2 bigint NOT NULL, link_type bigint NOT NULL,
			visibility smallint NOT NULL, data text NOT NULL, time bigint NOT NULL, version int NOT NULL, PRIMARY KEY (link_type, id1, id2))`)
		t.Cleanup(func() { pgExec(t, url, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
		_, errOut, code := runCLI(t, t.TempDir(), append([]string{"load", "-c", repoConfig(t, "LinkConfigPgsql.properties"), "-D", "url=" + url, "-D", "pg_schema=" + schema}, graph...)...)
		if code != 1 || !strings.Contains(errOut, "column data is text, which cannot hold its values (binary payloads of up to 255 bytes); expected bytea") || strings.Contains(errOut, "--resume") {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
	})
	t.Run("sqlite time real", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "lb.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE linktable (id1 INTEGER, id2 INTEGER, link_type INTEGER, visibility INTEGER, data BLOB, time REAL, version INTEGER,
			PRIMARY KEY (link_type, id1, id2))`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, errOut, code := runCLI(t, dir, append([]string{"load", "-D", "sqlite_path=" + path}, graph...)...)
		if code != 1 || !strings.Contains(errOut, `column time is "REAL" (REAL affinity)`) {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
	})
}

// TestStatementTimeoutNamesTheOp: a server-side statement timeout (set
// in the url) fails requests with a line that names the operation and the
// setting that cancelled it, not a bare server message.
// Reliability(server): a server-side statement timeout (PostgreSQL `statement_timeout`, MariaDB `max_statement_time`; real server) | one line naming the step or the operation (`GET_NODE: ...`) and the setting that cancelled it
func TestStatementTimeoutNamesTheOp(t *testing.T) {
	myURL := storetest.ServerURL(t, storetest.MySQLEnv)
	// MariaDB's limit is set on a user of its own.
	user := fmt.Sprintf("lbstmt%d", os.Getpid())
	mysqlExec(t, "", "DROP USER IF EXISTS '"+user+"'@'127.0.0.1'", "CREATE USER '"+user+"'@'127.0.0.1' IDENTIFIED BY 'pw' WITH MAX_STATEMENT_TIME 0.000001",
		"GRANT ALL ON linkdb0.* TO '"+user+"'@'127.0.0.1'")
	t.Cleanup(func() { mysqlExec(t, "", "DROP USER IF EXISTS '"+user+"'@'127.0.0.1'") })
	limited := "mysql://" + user + ":pw@" + myURL[strings.Index(myURL, "@")+1:]
	for _, c := range []struct {
		name, config, url, limited, want string
	}{
		{"postgres", "LinkConfigPgsql.properties", storetest.ServerURL(t, storetest.PostgresEnv), storetest.ServerURL(t, storetest.PostgresEnv) + "&options=-c%20statement_timeout%3D1", "the server's statement_timeout"},
		{"mariadb", "LinkConfigMysql.properties", myURL, limited, "max_statement_time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			common := []string{"-c", repoConfig(t, c.config), "-D", "nlinks_func=const", "-D", "nlinks_default=2", "-D", "maxid1=501", "--no-results",
				"-D", fmt.Sprintf("pg_schema=lbstmt%d", os.Getpid())}
			if _, errOut, code := runCLI(t, dir, append([]string{"load", "--truncate", "-D", "url=" + c.url}, common...)...); code != 0 {
				t.Fatalf("load: %s", errOut)
			}
			// Reads of the schema take longer than the limit too: the
			// check at start names its step; with the check passed, a
			// request names its op.
			_, errOut, code := runCLI(t, dir, append([]string{"run", "-D", "url=" + c.limited, "-D", "maxtime=3", "-D", "max_failed_requests=2"}, common...)...)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			line := errOut[strings.LastIndex(errOut, "linkbench: "):]
			named := strings.Contains(line, "check the tables: ") || strings.Contains(line, "take the store's one-writer lock: ")
			for _, op := range []string{"ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK", "MULTIGET_LINK", "GET_LINKS_LIST", "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE"} {
				named = named || strings.Contains(line, "error: "+op+": ")
			}
			if !named {
				t.Fatalf("the message names no operation: %s", line)
			}
		})
	}
}
