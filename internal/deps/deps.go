package deps
import (
_ "github.com/jackc/pgx/v5"
_ "github.com/go-sql-driver/mysql"
_ "modernc.org/sqlite"
_ "github.com/cockroachdb/pebble/v2"
_ "github.com/HdrHistogram/hdrhistogram-go"
_ "github.com/magiconair/properties"
_ "github.com/spf13/cobra"
_ "github.com/vbauerster/mpb/v8"
_ "github.com/prometheus/client_golang/prometheus"
)
