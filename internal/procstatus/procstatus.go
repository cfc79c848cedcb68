// Package procstatus reads this process's /proc/self/status (Linux): its
// resident set and high-water marks, for tests and benchmarks that bound
// memory.
package procstatus

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// KiB returns the value of one "Name: N kB" line of /proc/self/status;
// field includes its colon ("VmRSS:", "RssFile:"). It fails where there
// is no such file or line.
func KiB(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(field)); ok {
			if f := bytes.Fields(rest); len(f) > 0 {
				return strconv.ParseInt(string(f[0]), 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("procstatus: %s not in /proc/self/status", field)
}
