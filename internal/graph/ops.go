package graph

// Op is a measured operation type.
type Op uint8

// Request-phase operations, in the order of the cumulative mix (SPEC 4),
// followed by the load-phase operations and the RANGE_SIZE pseudo-op.
const (
	AddLink Op = iota
	DeleteLink
	UpdateLink
	CountLink
	MultigetLink
	GetLinksList
	AddNode
	UpdateNode
	DeleteNode
	GetNode
	LoadNodesBulk
	LoadLinksBulk
	LoadCountsBulk
	RangeSize
	NumOps
)

// NumRequestOps is the number of request-phase operations (AddLink..GetNode).
const NumRequestOps = int(GetNode) + 1

var opNames = [NumOps]string{
	AddLink:        "ADD_LINK",
	DeleteLink:     "DELETE_LINK",
	UpdateLink:     "UPDATE_LINK",
	CountLink:      "COUNT_LINK",
	MultigetLink:   "MULTIGET_LINK",
	GetLinksList:   "GET_LINKS_LIST",
	AddNode:        "ADD_NODE",
	UpdateNode:     "UPDATE_NODE",
	DeleteNode:     "DELETE_NODE",
	GetNode:        "GET_NODE",
	LoadNodesBulk:  "LOAD_NODE_BULK",
	LoadLinksBulk:  "LOAD_LINKS_BULK",
	LoadCountsBulk: "LOAD_COUNTS_BULK",
	RangeSize:      "RANGE_SIZE",
}

// String returns the reference's name of the operation (ADD_LINK, ...).
func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return "UNKNOWN"
}

// MixKeys are the config keys of the operation mix, indexed by Op.
var MixKeys = [NumRequestOps]string{
	AddLink:      "addlink",
	DeleteLink:   "deletelink",
	UpdateLink:   "updatelink",
	CountLink:    "countlink",
	MultigetLink: "getlink",
	GetLinksList: "getlinklist",
	AddNode:      "addnode",
	UpdateNode:   "updatenode",
	DeleteNode:   "deletenode",
	GetNode:      "getnode",
}

// ParseOp maps a reference op name (ADD_LINK, ...) to an Op.
func ParseOp(s string) (Op, bool) {
	for i, n := range opNames {
		if n == s {
			return Op(i), true
		}
	}
	return 0, false
}
