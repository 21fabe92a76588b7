package sysmon

import "syscall"

type syscallStat struct{ major, minor uint32 }

func statDev(path string, out *syscallStat) bool {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false
	}
	dev := uint64(st.Dev)
	out.major = uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff)
	out.minor = uint32(dev&0xff) | uint32((dev>>12)&^0xff)
	return true
}
