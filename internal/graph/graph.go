package graph

// Fixed constants of the workload (SPEC section 1).
const (
	// NodeType is the type of every generated node.
	NodeType int32 = 2048
	// DefaultLinkType is the first link type; types are DefaultLinkType + i.
	DefaultLinkType int64 = 123456789
	// DefaultListLimit is the default and maximum page of GET_LINKS_LIST.
	DefaultListLimit = 10000
	// MaxLinkData is the largest link payload in bytes.
	MaxLinkData = 255
	// MaxNodeData is the exclusive upper bound of a node payload in bytes.
	MaxNodeData = 1 << 20
)

// Visibility of a link.
const (
	VisibilityHidden  uint8 = 0
	VisibilityDefault uint8 = 1
)

// Node is a vertex of the social graph.
type Node struct {
	ID      int64
	Type    int32
	Version int64
	Time    int32 // seconds
	Data    []byte
}

// Link is a directed, typed edge id1 -> id2.
type Link struct {
	ID1        int64
	LinkType   int64
	ID2        int64
	Visibility uint8
	Data       []byte
	Version    int32
	Time       int64 // milliseconds; the sort key of adjacency lists
}

// Count is the number of visible links out of ID1 of type LinkType.
type Count struct {
	ID1      int64
	LinkType int64
	Count    int64
	Time     int64 // milliseconds
	Version  int64
}

// WriteResult says what a link upsert did.
type WriteResult uint8

// Results of ADD_LINK / UPDATE_LINK.
const (
	Unchanged WriteResult = iota
	Inserted
	Updated
)

func (r WriteResult) String() string {
	switch r {
	case Inserted:
		return "inserted"
	case Updated:
		return "updated"
	default:
		return "unchanged"
	}
}

// ListQuery selects a page of visible links of (ID1, LinkType) ordered by
// time descending then id2 descending, with MinTime <= time <= MaxTime.
type ListQuery struct {
	ID1      int64
	LinkType int64
	MinTime  int64
	MaxTime  int64
	Offset   int
	Limit    int
}

// NewListQuery is the query with no time bounds, offset 0 and the default limit.
func NewListQuery(id1, linkType int64) ListQuery {
	return ListQuery{ID1: id1, LinkType: linkType, MinTime: 0, MaxTime: MaxTime, Limit: DefaultListLimit}
}

// MaxTime is the largest link time; a list query up to it has no upper bound.
const MaxTime int64 = 1<<63 - 1
