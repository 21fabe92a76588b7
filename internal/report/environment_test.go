package report

import (
	"reflect"
	"runtime"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	got := RedactArgs([]string{"run", "-D", "password=hunter2", "-Durl=postgres://u:pw@h/db", "-D", "maxid1=5", "--define", "db_password=x", "-c", "password=file"})
	want := []string{"run", "-D", "password=******", "-Durl=postgres://u:******@h/db", "-D", "maxid1=5", "--define", "db_password=******", "-c", "password=file"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestFileSystemOf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/mountinfo")
	}
	dir := t.TempDir()
	fs := FileSystemOf(dir + "/not/yet/there.db")
	if fs.MountPoint == "" || fs.Type == "" || fs.Device == "" {
		t.Errorf("FileSystemOf(%s) = %+v", dir, fs)
	}
	if root := FileSystemOf("/"); root.MountPoint != "/" {
		t.Errorf("FileSystemOf(/) = %+v", root)
	}
	if got := unescapeMount(`/mnt/my\040disk`); got != "/mnt/my disk" {
		t.Errorf("unescape: %q", got)
	}
}
