// Package wiretap records what a SQL server is asked to do: a proxy on
// 127.0.0.1 in front of a PostgreSQL or MySQL server reads the protocol
// between each client connection and the server and records, per
// connection, every statement the server executes (its text, whether it
// was prepared) and its outcome (done, or the server's error code).
// Tests use it to compare what linkbench sends with what the reference
// sends, and what it sends at one requester count with another: it sees
// exactly the bytes the server sees, whatever the driver does.
//
// It reads plain connections only (no TLS, no compression), as the test
// servers of scripts/ speak them.
package wiretap

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
)

// Protocol is the server's wire protocol.
type Protocol int

const (
	// Postgres is PostgreSQL's frontend/backend protocol 3.0.
	Postgres Protocol = iota
	// MySQL is the MySQL client/server protocol (MariaDB's too).
	MySQL
)

// Stmt is one statement a connection sent the server.
type Stmt struct {
	Conn int    // the connection's number, from 1 in the order they opened
	Text string // the statement's text as sent
	// Prepared is set for a statement the server executed from an earlier
	// preparation (PostgreSQL: a named statement; MySQL: COM_STMT_EXECUTE).
	Prepared bool
	// Err is the server's error code (SQLSTATE for PostgreSQL, the error
	// number for MySQL), "" when it succeeded.
	Err string
}

// Proxy forwards connections to a server and records their statements.
type Proxy struct {
	ln       net.Listener
	upstream string
	proto    Protocol

	mu    sync.Mutex
	stmts []Stmt
	conns int
	open  map[net.Conn]bool
	wg    sync.WaitGroup
}

// Start listens on 127.0.0.1 and forwards each connection to upstream
// (host:port) until Close.
func Start(proto Protocol, upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, proto: proto, open: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port, for clients to connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening and closes every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Take returns the statements recorded since the last Take and forgets
// them, with the number of connections opened so far.
func (p *Proxy) Take() (stmts []Stmt, conns int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	stmts, p.stmts = p.stmts, nil
	return stmts, p.conns
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns++
		id := p.conns
		p.open[c], p.open[s] = true, true
		p.mu.Unlock()
		t := &tap{p: p, conn: id, names: map[string]string{}}
		p.wg.Add(2)
		go p.pipe(c, s, t.client)
		go p.pipe(s, c, t.server)
	}
}

// pipe copies src to dst, showing each message to see before it is
// forwarded (so a statement is recorded before the server can answer
// it). It ends both connections when either ends.
func (p *Proxy) pipe(src, dst net.Conn, see func(r *reader, w io.Writer) error) {
	defer p.wg.Done()
	see(&reader{r: src}, dst)
	src.Close()
	dst.Close()
	p.mu.Lock()
	delete(p.open, src)
	delete(p.open, dst)
	p.mu.Unlock()
}

// reader reads whole messages.
type reader struct{ r io.Reader }

func (r *reader) full(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(r.r, b)
	return b, err
}

// tap is the state of one client connection's conversation.
type tap struct {
	p    *Proxy
	conn int

	mu sync.Mutex
	// PostgreSQL: the statements named by Parse, and the executions whose
	// outcome has not come yet, a nil entry marking each Sync.
	names    map[string]string
	pending  []*Stmt
	bound    Stmt // the statement of the last Bind
	encAsked bool // the client asked for encryption: its answer is one byte
	// MySQL: the command whose first answer is awaited, the preparations
	// awaiting their ids, and the prepared statements by id.
	awaiting  *Stmt
	preparing string
	ids       map[uint32]string
}

func (t *tap) client(r *reader, w io.Writer) error {
	if t.p.proto == MySQL {
		return t.mysqlClient(r, w)
	}
	return t.pgClient(r, w)
}

func (t *tap) server(r *reader, w io.Writer) error {
	if t.p.proto == MySQL {
		return t.mysqlServer(r, w)
	}
	return t.pgServer(r, w)
}

// record adds a finished statement.
func (t *tap) record(s Stmt) {
	t.p.mu.Lock()
	t.p.stmts = append(t.p.stmts, s)
	t.p.mu.Unlock()
}

// pgClient reads the frontend's messages: the startup packet (and an
// SSL request, refused by the test servers), then typed messages.
func (t *tap) pgClient(r *reader, w io.Writer) error {
	for started := false; !started; {
		hdr, err := r.full(4)
		if err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr))
		if n < 8 || n > 1<<20 {
			return errors.New("wiretap: a startup message of a bad length")
		}
		body, err := r.full(n - 4)
		if err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(body)
		started = code != 80877103 && code != 80877104 // SSL or GSS encryption request
		if !started {
			t.mu.Lock()
			t.encAsked = true
			t.mu.Unlock()
		}
		if _, err := w.Write(append(hdr, body...)); err != nil {
			return err
		}
	}
	for {
		typ, body, raw, err := pgMessage(r)
		if err != nil {
			return err
		}
		t.mu.Lock()
		switch typ {
		case 'P': // Parse: name, query
			name, rest := cstring(body)
			query, _ := cstring(rest)
			t.names[name] = query
		case 'B': // Bind: portal, statement
			_, rest := cstring(body)
			name, _ := cstring(rest)
			t.bound = Stmt{Conn: t.conn, Text: t.names[name], Prepared: name != ""}
		case 'E': // Execute
			s := t.bound
			t.pending = append(t.pending, &s)
		case 'S': // Sync
			t.pending = append(t.pending, nil)
		case 'Q': // a simple query, its own Sync
			query, _ := cstring(body)
			t.pending = append(t.pending, &Stmt{Conn: t.conn, Text: query}, nil)
		}
		t.mu.Unlock()
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
}

// pgServer reads the backend's messages and settles the executions in
// order: CommandComplete (or EmptyQueryResponse) ends one, ErrorResponse
// fails one and the server skips the rest up to the Sync, ReadyForQuery
// ends the Sync.
func (t *tap) pgServer(r *reader, w io.Writer) error {
	// The startup's answers come as typed messages too, before any Sync;
	// an encryption request (a JDBC driver's sslmode=prefer) is answered
	// with one byte, N when refused (S or G would start TLS or GSS, which
	// the tap does not read).
	for {
		b, err := r.full(1)
		if err != nil {
			return err
		}
		t.mu.Lock()
		asked := t.encAsked
		t.encAsked = false
		t.mu.Unlock()
		if asked && b[0] == 'N' {
			if _, err := w.Write(b); err != nil {
				return err
			}
			continue
		}
		typ, body, raw, err := pgMessageAfter(b[0], r)
		if err != nil {
			return err
		}
		t.mu.Lock()
		switch typ {
		case 'C', 'I':
			if s := t.next(); s != nil {
				t.record(*s)
			}
		case 'E':
			if s := t.next(); s != nil {
				s.Err = pgErrorCode(body)
				t.record(*s)
				// The server skips what follows up to the Sync.
				for len(t.pending) > 0 && t.pending[0] != nil {
					t.pending = t.pending[1:]
				}
			}
		case 'Z':
			for len(t.pending) > 0 {
				done := t.pending[0] == nil
				t.pending = t.pending[1:]
				if done {
					break
				}
			}
		}
		t.mu.Unlock()
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
}

// next is the execution the server answers now, nil at a Sync.
func (t *tap) next() *Stmt {
	if len(t.pending) == 0 || t.pending[0] == nil {
		return nil
	}
	s := t.pending[0]
	t.pending = t.pending[1:]
	return s
}

func pgMessage(r *reader) (typ byte, body, raw []byte, err error) {
	b, err := r.full(1)
	if err != nil {
		return 0, nil, nil, err
	}
	return pgMessageAfter(b[0], r)
}

// pgMessageAfter reads the rest of a message whose type byte was typ.
func pgMessageAfter(typ byte, r *reader) (byte, []byte, []byte, error) {
	l, err := r.full(4)
	if err != nil {
		return 0, nil, nil, err
	}
	hdr := append([]byte{typ}, l...)
	n := int(binary.BigEndian.Uint32(hdr[1:]))
	if n < 4 || n > 1<<30 {
		return 0, nil, nil, errors.New("wiretap: a message of a bad length")
	}
	body, err := r.full(n - 4)
	return hdr[0], body, append(hdr, body...), err
}

func cstring(b []byte) (string, []byte) {
	i := 0
	for i < len(b) && b[i] != 0 {
		i++
	}
	if i == len(b) {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

// pgErrorCode is the SQLSTATE field of an ErrorResponse.
func pgErrorCode(b []byte) string {
	for len(b) > 0 && b[0] != 0 {
		field := b[0]
		var v string
		v, b = cstring(b[1:])
		if field == 'C' {
			return v
		}
	}
	return "?"
}

// The MySQL commands that carry statements or end a connection's use.
const (
	comQuit        = 0x01
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19
)

// mysqlClient reads the client's packets. A command starts at sequence
// number 0; the handshake's packets do not.
func (t *tap) mysqlClient(r *reader, w io.Writer) error {
	for {
		seq, body, raw, err := mysqlPacket(r)
		if err != nil {
			return err
		}
		if seq == 0 && len(body) > 0 {
			t.mu.Lock()
			switch body[0] {
			case comQuery:
				t.awaiting = &Stmt{Conn: t.conn, Text: string(body[1:])}
			case comStmtPrepare:
				t.preparing, t.awaiting = string(body[1:]), nil
			case comStmtExecute:
				if len(body) >= 5 {
					id := binary.LittleEndian.Uint32(body[1:5])
					t.awaiting = &Stmt{Conn: t.conn, Text: t.ids[id], Prepared: true}
				}
			case comStmtClose, comQuit:
				// no answer
			default:
				t.awaiting = nil
			}
			t.mu.Unlock()
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
}

// mysqlServer reads the server's packets: the first of each command's
// answer (sequence number 1) says how it went, OK, an error or a result.
func (t *tap) mysqlServer(r *reader, w io.Writer) error {
	for {
		seq, body, raw, err := mysqlPacket(r)
		if err != nil {
			return err
		}
		if seq == 1 && len(body) > 0 {
			t.mu.Lock()
			switch {
			case t.preparing != "":
				if body[0] == 0x00 && len(body) >= 5 {
					if t.ids == nil {
						t.ids = map[uint32]string{}
					}
					t.ids[binary.LittleEndian.Uint32(body[1:5])] = t.preparing
				}
				t.preparing = ""
			case t.awaiting != nil:
				s := *t.awaiting
				if body[0] == 0xff && len(body) >= 3 {
					s.Err = itoa(int(binary.LittleEndian.Uint16(body[1:3])))
				}
				t.awaiting = nil
				t.record(s)
			}
			t.mu.Unlock()
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
}

func mysqlPacket(r *reader) (seq byte, body, raw []byte, err error) {
	hdr, err := r.full(4)
	if err != nil {
		return 0, nil, nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	body, err = r.full(n)
	return hdr[3], body, append(hdr, body...), err
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

var (
	literal = regexp.MustCompile(`'(?:[^']|'')*'|\$\d+|\b\d+\b|\?`)
	inList  = regexp.MustCompile(`(?i)\bIN\s*\(\s*\?(?:\s*,\s*\?)*\s*\)`)
	spaces  = regexp.MustCompile(`\s+`)
	quotes  = regexp.MustCompile("[`\"]")
)

// Shape is a statement's text with its values, parameters and quoting
// taken out, its IN lists made one, its spaces made one and its case made
// upper: "SELECT ... WHERE id1 = 7 AND id2 IN (1, 2)" and "... id1 = $1 AND
// id2 IN (3)" have one shape.
func Shape(text string) string {
	s := quotes.ReplaceAllString(text, "")
	s = literal.ReplaceAllString(s, "?")
	s = inList.ReplaceAllString(s, "IN (?)")
	s = spaces.ReplaceAllString(strings.TrimSpace(s), " ")
	return strings.ToUpper(s)
}

var target = regexp.MustCompile(`(?i)\b(?:FROM|INTO|UPDATE)\s+([\w.]+)`)

// Kind names what a statement does in a few words: its verb, the table
// it works on (without a schema), FOR UPDATE or UPSERT when it says so,
// TEXT when it was not prepared (for the statements that carry values),
// and the server's error after a "!": "SELECT LINKTABLE FOR UPDATE",
// "INSERT COUNTTABLE UPSERT", "INSERT LINKTABLE !23505", "COMMIT".
func Kind(s Stmt) string {
	shape := Shape(s.Text)
	verb, _, _ := strings.Cut(shape, " ")
	k := verb
	if m := target.FindStringSubmatch(shape); m != nil {
		table := m[1]
		if i := strings.LastIndexByte(table, '.'); i >= 0 {
			table = table[i+1:]
		}
		k += " " + table
		if strings.Contains(shape, " FOR UPDATE") {
			k += " FOR UPDATE"
		}
		if strings.Contains(shape, " ON CONFLICT") || strings.Contains(shape, " ON DUPLICATE KEY") {
			k += " UPSERT"
		}
		if !s.Prepared {
			k += " TEXT"
		}
	}
	if s.Err != "" {
		k += " !" + s.Err
	}
	return k
}
