package pebble

import "encoding/binary"

const (
	pNode  = 'n'
	pLink  = 'l'
	pIndex = 'i'
	pCount = 'c'
	pMeta  = 'm'
	pSeq   = 's'
	pMark  = 'z'
)

func putInt(b []byte, v int64) { binary.BigEndian.PutUint64(b, uint64(v)^(1<<63)) }

func getInt(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

func nodeKey(id int64) []byte {
	k := make([]byte, 9)
	k[0] = pNode
	putInt(k[1:], id)
	return k
}

func linkKey(id1, lt, id2 int64) []byte {
	k := make([]byte, 25)
	k[0] = pLink
	putInt(k[1:], id1)
	putInt(k[9:], lt)
	putInt(k[17:], id2)
	return k
}

// listPrefix is the common prefix of the list entries of (id1, lt).
func listPrefix(id1, lt int64) []byte {
	k := make([]byte, 17, 33)
	k[0] = pIndex
	putInt(k[1:], id1)
	putInt(k[9:], lt)
	return k
}

func indexKey(id1, lt, tm, id2 int64) []byte {
	k := listPrefix(id1, lt)[:33]
	putInt(k[17:], tm)
	putInt(k[25:], id2)
	for i := 17; i < 33; i++ {
		k[i] = ^k[i]
	}
	return k
}

// decodeIndex returns time and id2 of an index key.
func decodeIndex(k []byte) (tm, id2 int64) {
	var b [16]byte
	for i := range b {
		b[i] = ^k[17+i]
	}
	return getInt(b[:8]), getInt(b[8:])
}

func countKey(id1, lt int64) []byte {
	k := make([]byte, 17)
	k[0] = pCount
	putInt(k[1:], id1)
	putInt(k[9:], lt)
	return k
}

// prefixEnd is the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Values.

func encLink(vis uint8, tm int64, ver int32, data []byte) []byte {
	v := make([]byte, 13+len(data))
	v[0] = vis
	putInt(v[1:], tm)
	binary.BigEndian.PutUint32(v[9:], uint32(ver))
	copy(v[13:], data)
	return v
}

func decLink(v []byte) (vis uint8, tm int64, ver int32, data []byte) {
	return v[0], getInt(v[1:]), int32(binary.BigEndian.Uint32(v[9:])), v[13:]
}

func encIndex(ver int32, data []byte) []byte {
	v := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(v, uint32(ver))
	copy(v[4:], data)
	return v
}

func encCount(count, tm, ver int64) []byte {
	v := make([]byte, 24)
	putInt(v, count)
	putInt(v[8:], tm)
	putInt(v[16:], ver)
	return v
}

func decCount(v []byte) (count, tm, ver int64) { return getInt(v), getInt(v[8:]), getInt(v[16:]) }

func encNode(typ int32, ver int64, tm int32, data []byte) []byte {
	v := make([]byte, 16+len(data))
	binary.BigEndian.PutUint32(v, uint32(typ))
	putInt(v[4:], ver)
	binary.BigEndian.PutUint32(v[12:], uint32(tm))
	copy(v[16:], data)
	return v
}

func decNode(v []byte) (typ int32, ver int64, tm int32, data []byte) {
	return int32(binary.BigEndian.Uint32(v)), getInt(v[4:]), int32(binary.BigEndian.Uint32(v[12:])), v[16:]
}
