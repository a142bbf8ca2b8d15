package host

import (
	"fmt"
	"os"
	"strings"
)

// leaderExited reports whether the plugin process itself has exited (it
// is a zombie or gone) while go-plugin has not noticed: go-plugin reaps it
// only after its stdout and stderr pipes close, which a child that
// inherited them can delay for as long as the child lives.
func leaderExited(pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
