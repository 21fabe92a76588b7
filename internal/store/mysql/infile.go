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

// loadLinksInfile streams the batch through LOAD DATA LOCAL INFILE, which
// costs the server far less than parsing multi-row INSERTs.
func (s *Store) loadLinksInfile(ctx context.Context, links []graph.Link) error {
	var buf bytes.Buffer
	buf.Grow(len(links) * 80)
	var num [20]byte
	for i := range links {
		l := &links[i]
		for _, v := range []int64{l.ID1, l.ID2, l.LinkType, int64(l.Visibility)} {
			buf.Write(strconv.AppendInt(num[:0], v, 10))
			buf.WriteByte('\t')
		}
		appendField(&buf, l.Data)
		buf.WriteByte('\t')
		buf.Write(strconv.AppendInt(num[:0], l.Time, 10))
		buf.WriteByte('\t')
		buf.Write(strconv.AppendInt(num[:0], int64(l.Version), 10))
		buf.WriteByte('\n')
	}
	name := fmt.Sprintf("linkbench-%d", readerSeq.Add(1))
	gomysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(buf.Bytes()) })
	defer gomysql.DeregisterReaderHandler(name)
	ignore := ""
	if store.SkipExisting(ctx) {
		ignore = "IGNORE "
	}
	_, err := s.load.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' "+ignore+"INTO TABLE "+q(s.t.Link)+
		" CHARACTER SET latin1 (id1, id2, link_type, visibility, data, time, version)")
	return classify(err)
}
