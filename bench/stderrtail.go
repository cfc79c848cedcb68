package bench

// StderrTail is the end of the child's stderr for every run (Stderr keeps
// it only for failed ones), for tools that read a summary line the child
// logs, such as followbench's fetch wait.
func (r *Record) StderrTail() string { return r.tail }
