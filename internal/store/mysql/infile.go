package mysql

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/linkbench/linkbench/internal/graph"
	"github.com/linkbench/linkbench/internal/store"
)

var readerSeq atomic.Int64

// appendField writes b escaped for LOAD DATA's default format
// (tab-separated, backslash escapes).
func appendField(buf *bytes.Buffer, b []byte) {
	for _, c := range b {
		switch c {
		case '\\':
			buf.WriteString(`\\`)
		case '\t':
			buf.WriteString(`\t`)
		case '\n':
			buf.WriteString(`\n`)
		case 0:
			buf.WriteString(`\0`)
		default:
			buf.WriteByte(c)
		}
	}
}

// loadInfile streams n rows through LOAD DATA LOCAL INFILE into table's
// columns cols, each row written by row as tab-separated fields: the
// server parses far less than for multi-row INSERTs of the same rows.
func (s *Store) loadInfile(ctx context.Context, table, cols string, n, rowBytes int, row func(buf *bytes.Buffer, num []byte, i int)) error {
	var buf bytes.Buffer
	buf.Grow(n * rowBytes)
	var num [20]byte
	for i := range n {
		row(&buf, num[:0], i)
		buf.WriteByte('\n')
	}
	name := fmt.Sprintf("linkbench-%d", readerSeq.Add(1))
	gomysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(buf.Bytes()) })
	defer gomysql.DeregisterReaderHandler(name)
	ignore := ""
	if store.SkipExisting(ctx) {
		ignore = "IGNORE "
	}
	_, err := s.load.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' "+ignore+"INTO TABLE "+q(table)+
		" CHARACTER SET latin1 ("+cols+")")
	return classify(err)
}

// appendInts writes vs as tab-terminated fields.
func appendInts(buf *bytes.Buffer, num []byte, vs ...int64) {
	for _, v := range vs {
		buf.Write(strconv.AppendInt(num, v, 10))
		buf.WriteByte('\t')
	}
}

func (s *Store) loadLinksInfile(ctx context.Context, links []graph.Link) error {
	return s.loadInfile(ctx, s.t.Link, "id1, id2, link_type, visibility, data, time, version", len(links), 80, func(buf *bytes.Buffer, num []byte, i int) {
		l := &links[i]
		appendInts(buf, num, l.ID1, l.ID2, l.LinkType, int64(l.Visibility))
		appendField(buf, l.Data)
		buf.WriteByte('\t')
		buf.Write(strconv.AppendInt(num, l.Time, 10))
		buf.WriteByte('\t')
		buf.Write(strconv.AppendInt(num, int64(l.Version), 10))
	})
}

func (s *Store) loadNodesInfile(ctx context.Context, nodes []graph.Node) error {
	return s.loadInfile(ctx, s.t.Node, "id, type, version, time, data", len(nodes), 160, func(buf *bytes.Buffer, num []byte, i int) {
		n := &nodes[i]
		appendInts(buf, num, n.ID, int64(n.Type), n.Version, int64(n.Time))
		appendField(buf, n.Data)
	})
}

func (s *Store) loadCountsInfile(ctx context.Context, counts []graph.Count) error {
	return s.loadInfile(ctx, s.t.Count, "id, link_type, count, time, version", len(counts), 48, func(buf *bytes.Buffer, num []byte, i int) {
		c := &counts[i]
		appendInts(buf, num, c.ID1, c.LinkType, c.Count, c.Time)
		buf.Write(strconv.AppendInt(num, c.Version, 10))
	})
}
